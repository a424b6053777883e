/**
 * Requests from the server to the client during a tool call: `sampling/createMessage` (ask the client's model) and
 * `elicitation/create` (ask its user, form mode), for tools that need them (ToolContext `sample`, `elicit`). A call
 * may ask only what the client declared it answers (its `sampling` and `elicitation` capabilities). Each protocol
 * revision has its own way (docs/adr/0190-mcp-client-requests.md):
 *
 * - 2025-era sessions: the request is sent on the tool call's own answer, which becomes an event stream
 *   (event-stream.ts), and the client POSTs its answer in the same session; `ClientRequests` routes it to the waiting
 *   call. The call waits `timeoutMs` at most, with keep-alive comments on the stream; no answer by then, an error
 *   answer, an answer of the wrong shape or the stream closing fails the ask with `client_request_failed`. The
 *   waiting call lives in the process that holds its stream: an answer POSTed to another process finds nothing there
 *   and the call times out (docs/mcp.md "Several processes").
 * - 2026-07-28: servers no longer send requests to the client. The call answers `input_required` with the requests
 *   (`inputRequests`); the client retries the call with the answers (`inputResponses`) and the `requestState` echoed.
 *   The tool runs again from the start and each ask, in the same order, finds its answer (`RoundAsker`).
 */
import { randomBytes } from 'node:crypto'
import { inputRequired, isSpecType, type InputRequest, type InputRequiredResult } from '@modelcontextprotocol/server'
import { ApiError } from '../../core/errors.ts'
import { isJsonObject } from '../../core/json-object.ts'
import type { StreamedAnswer } from './event-stream.ts'

/** What a client declared it answers: `sampling`, and `elicitation` in form mode. */
export interface ClientAbilities {
  sampling?: boolean
  elicitation?: boolean
}

/**
 * The abilities a client's capabilities declare, or undefined for none. An `elicitation` object without `form` or `url`
 * means form mode (the 2025-11-25 specification keeps that reading for older clients).
 */
export function clientAbilities(capabilities: unknown): ClientAbilities | undefined {
  if (!isJsonObject(capabilities)) return undefined
  const out: ClientAbilities = {}
  if (isJsonObject(capabilities.sampling)) out.sampling = true
  const e = capabilities.elicitation
  if (isJsonObject(e) && (isJsonObject(e.form) || (e.form === undefined && e.url === undefined))) out.elicitation = true
  return out.sampling || out.elicitation ? out : undefined
}

export type AskMethod = 'sampling/createMessage' | 'elicitation/create'

/** How one tool call asks its client; present only when the client may be asked something. */
export interface ClientAsker {
  readonly abilities: ClientAbilities
  /** Resolves with the client's answer, checked against the method's result shape; rejects with `client_request_failed`. */
  ask(method: AskMethod, params: Record<string, unknown>): Promise<unknown>
  /** 2026-07-28: the `input_required` result the call answers with when an ask found no answer yet. */
  inputRequired?(): InputRequiredResult | undefined
}

/** The waiting ends once the client answers, at the latest after this long. */
export const DEFAULT_ANSWER_MS = 60_000
/** How often a waiting call writes a keep-alive comment on its stream. */
const KEEP_ALIVE_MS = 15_000

const failed = (method: AskMethod, why: string) => new ApiError('client_request_failed', `The tool asked the client (${method}) and ${why}.`)

/** The answer, when it has the method's result shape. */
function checked(method: AskMethod, result: unknown): unknown {
  const ok = method === 'elicitation/create' ? isSpecType.ElicitResult(result) : isSpecType.CreateMessageResult(result) || isSpecType.CreateMessageResultWithTools(result)
  if (!ok) throw failed(method, `got an answer that is not a valid ${method === 'elicitation/create' ? 'ElicitResult' : 'CreateMessageResult'}`)
  return result
}

interface Waiting {
  owner: string
  method: AskMethod
  settle(message: { result?: unknown; error?: unknown }): void
}

/** The 2025-era requests of this process's tool calls that wait for their client's answer. */
export class ClientRequests {
  private readonly pending = new Map<string, Waiting>()

  constructor(
    readonly timeoutMs = DEFAULT_ANSWER_MS,
    private readonly keepAliveMs = KEEP_ALIVE_MS,
  ) {}

  /** Requests waiting for an answer now (none is left once its call has its outcome). */
  get waiting(): number {
    return this.pending.size
  }

  /** The asker of one tool call answered on `stream`, in the session `owner` (its key: sessions.ts `sessionKey`). */
  asker(stream: StreamedAnswer, owner: string, abilities: ClientAbilities): ClientAsker {
    return { abilities, ask: (method, params) => this.send(stream, owner, method, params) }
  }

  private send(stream: StreamedAnswer, owner: string, method: AskMethod, params: Record<string, unknown>): Promise<unknown> {
    if (stream.closed) return Promise.reject(failed(method, 'could not send it: the call\'s stream is closed'))
    // Unguessable, and never a number: the client's answer is routed by it, only within the session that was asked.
    const id = `orgscan-${randomBytes(16).toString('base64url')}`
    const res = stream.response
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer)
        clearInterval(beat)
        res.off('close', gone)
        this.pending.delete(id)
      }
      const gone = () => {
        done()
        reject(failed(method, 'the client closed the call\'s stream before answering'))
      }
      const timer = setTimeout(() => {
        done()
        reject(failed(method, `got no answer within ${Math.round(this.timeoutMs / 100) / 10} seconds`))
      }, this.timeoutMs)
      const beat = setInterval(() => stream.keepAlive(), this.keepAliveMs)
      // Bounded and cleared on every outcome; never what keeps a stopping process alive.
      timer.unref()
      beat.unref()
      res.once('close', gone)
      this.pending.set(id, {
        owner,
        method,
        settle: (m) => {
          done()
          if (m.error !== undefined) {
            const text = isJsonObject(m.error) && typeof m.error.message === 'string' ? m.error.message.slice(0, 200) : 'no message'
            return reject(failed(method, `the client answered with an error: ${text}`))
          }
          try {
            resolve(checked(method, m.result))
          } catch (e) {
            reject(e)
          }
        },
      })
      stream.notify({ jsonrpc: '2.0', id, method, params })
    })
  }

  /**
   * A client's answer, POSTed in the session `owner`: settles the request it answers. False when no request of that
   * session waits under its id (an answer after the timeout, or to another session's request, changes nothing).
   */
  answer(owner: string, message: { id?: unknown; result?: unknown; error?: unknown }): boolean {
    const w = typeof message.id === 'string' ? this.pending.get(message.id) : undefined
    if (!w || w.owner !== owner) return false
    w.settle(message)
    return true
  }
}

/** A JSON-RPC response (an answer of the client to one of our requests): an id, a result or an error, and no method. */
export function isClientAnswer(body: Record<string, unknown>): boolean {
  return !Object.hasOwn(body, 'method') && Object.hasOwn(body, 'id') && (Object.hasOwn(body, 'result') || Object.hasOwn(body, 'error'))
}

/** Thrown by a 2026-era ask that has no answer yet: the call then answers `input_required`. */
export class InputNeeded extends Error {
  constructor() {
    super('The client must answer the input requests first.')
  }
}

/**
 * The asks of one round of a 2026-07-28 tool call. Asks are keyed by their order in the run ("1", "2", …); a retry
 * runs the tool again, and each ask takes its answer from the round's `inputResponses` or, for the rounds before, from
 * `requestState`, which carries the answers given so far. The state is not signed: it holds only what the client
 * itself answered, which it may change on any retry anyway, and nothing that grants access.
 */
export class RoundAsker implements ClientAsker {
  private count = 0
  private readonly answers: Record<string, unknown>
  private needed: Record<string, InputRequest> | undefined

  constructor(
    readonly abilities: ClientAbilities,
    private readonly tool: string,
    responses: Record<string, unknown> | undefined,
    state: unknown,
  ) {
    this.answers = { ...earlierAnswers(tool, state), ...responses }
  }

  ask(method: AskMethod, params: Record<string, unknown>): Promise<unknown> {
    const key = String(++this.count)
    if (Object.hasOwn(this.answers, key)) {
      try {
        return Promise.resolve(checked(method, this.answers[key]))
      } catch (e) {
        return Promise.reject(e)
      }
    }
    ;(this.needed ??= {})[key] = { method, params } as InputRequest
    return Promise.reject(new InputNeeded())
  }

  inputRequired(): InputRequiredResult | undefined {
    if (!this.needed) return undefined
    const state = Buffer.from(JSON.stringify({ tool: this.tool, answers: this.answers })).toString('base64url')
    return inputRequired({ inputRequests: this.needed, requestState: state })
  }
}

/** The answers a `requestState` carries for `tool`; none when it is absent, malformed or another tool's. */
function earlierAnswers(tool: string, state: unknown): Record<string, unknown> {
  if (typeof state !== 'string' || state.length === 0) return {}
  try {
    const s = JSON.parse(Buffer.from(state, 'base64url').toString('utf8')) as unknown
    if (isJsonObject(s) && s.tool === tool && isJsonObject(s.answers)) return s.answers
  } catch {
    // A state this server did not write: the asks are made again.
  }
  return {}
}

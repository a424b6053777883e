/**
 * The transport of 2025-era requests: one long-lived SDK `Server` per process serves every HTTP request, instead of
 * a server and a transport built per request (measured: twice the tool calls per second for a trivial tool; the
 * per-request web Request/Response, abort signals and handler registration dominated). This is the SDK's custom
 * transport interface: each HTTP request hands its JSON-RPC message to `dispatch`, which gives it an id unique in
 * the process (clients all start at 1), passes the caller's auth info with it, and resolves with the server's
 * answer under the client's own id. Sessions are checked before, by the endpoint; this transport has none.
 */
import type { AuthInfo, JSONRPCMessage, Transport } from '@modelcontextprotocol/server'

type Pending = { clientId: string | number; resolve: (m: JSONRPCMessage) => void }

export class LegacyMux implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage, extra?: { authInfo?: AuthInfo }) => void

  private next = 1
  private readonly pending = new Map<number, Pending>()

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.()
  }

  /** Answers of the server to dispatched requests; anything else (it sends no requests of its own) is dropped. */
  async send(message: JSONRPCMessage): Promise<void> {
    const id = (message as { id?: unknown }).id
    if (typeof id !== 'number') return
    const p = this.pending.get(id)
    if (!p) return
    this.pending.delete(id)
    p.resolve({ ...message, id: p.clientId } as JSONRPCMessage)
  }

  /**
   * Delivers one message; resolves with the answer to a request, undefined for a notification.
   *
   * A `notifications/cancelled` is dropped, never delivered: it names the request by the client's id, and the server
   * knows every request of the process by the id given here — the same number is some other caller's request, maybe
   * another account's, which the server would abort and leave unanswered. A cancelled call runs to its end instead.
   */
  dispatch(message: JSONRPCMessage, authInfo: AuthInfo): Promise<JSONRPCMessage | undefined> {
    const m = message as { id?: string | number; method?: string }
    if (m.id === undefined || m.method === undefined) {
      if (m.method !== 'notifications/cancelled') this.onmessage?.(message, { authInfo })
      return Promise.resolve(undefined)
    }
    const id = this.next++
    if (this.next > Number.MAX_SAFE_INTEGER) this.next = 1
    const clientId = m.id
    return new Promise((resolve) => {
      this.pending.set(id, { clientId, resolve })
      this.onmessage?.({ ...message, id } as JSONRPCMessage, { authInfo })
    })
  }
}

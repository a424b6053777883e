/**
 * The access log (docs/operating.md "Logs"): one JSON line per answered request — method, route template (never the
 * concrete path or its query string, which may carry filter values), status, duration, request id, and who called
 * (account, API key id or OAuth client id, user). Never a secret, a token or a header. Written as pino's JSON lines
 * (`encodeAccessLine`, straight into the blocks of access-sink.ts), by `orgscan serve`; a service started without an
 * access log writes none.
 */
import type { IncomingMessage } from 'node:http'
import { factsOf, PRINCIPAL, ROUTE } from '../../core/http/request-facts.ts'

export interface AccessLine {
  msg: 'request'
  method: string
  /** The route template (`/v1/orgs/:orgId/fields`), `(unmatched)` when no route took the request. */
  route: string
  status: number
  durationMs: number
  requestId: string
  accountId?: string
  /** The API key id or the OAuth client id: never a secret. */
  keyId?: string
  userId?: string
  /** Set when the client went away before the answer was complete. */
  aborted?: true
}

export type AccessLog = (line: AccessLine) => void

/**
 * An access-log line as text: the JSON line pino 9 writes for `info(line)` (with `{ worker }` as its `base` in a
 * worker), byte for byte — `level` 30, `time` in epoch milliseconds, the worker's slot, then the line's fields in
 * their order; test/ops/access-log.test.ts holds the two equal. The same bytes `encodeAccessLine` writes into the
 * sink's block, which is how `orgscan serve` writes them.
 */
export function formatAccessLine(l: AccessLine, time: number, worker?: number): string {
  const buf = Buffer.allocUnsafe(maxLineBytes(l))
  return buf.toString('utf8', 0, encodeAccessLine(buf, 0, l, time, worker))
}

/**
 * The most bytes `encodeAccessLine` may write for `l`: the names and punctuation (139 bytes with every optional
 * field), four numbers of at most 24 bytes each (`String()` of any number), and a string's UTF-8 as JSON, at most 6
 * bytes per UTF-16 unit (`\u001f`, or a lone surrogate).
 */
export function maxLineBytes(l: AccessLine): number {
  return 256 + methodAndRoute(l.method, l.route).length + 6 * (l.requestId.length + (l.accountId?.length ?? 0) + (l.keyId?.length ?? 0) + (l.userId?.length ?? 0))
}

/**
 * Writes `l` as its JSON line into `buf` from `at` (which must have `maxLineBytes(l)` bytes of room) and returns the
 * offset after it. Built straight into the block as bytes — constant parts copied, integers written digit by digit,
 * strings that need no escaping byte by byte — rather than as a string concatenated, flattened and then encoded, so a
 * line allocates next to nothing (docs/adr/0036-access-log-hand-encoded-pino-lines.md). Anything that needs escaping is
 * escaped by `JSON.stringify`, as pino does.
 */
export function encodeAccessLine(buf: Buffer, at: number, l: AccessLine, time: number, worker?: number): number {
  at = put(buf, at, LEVEL_TIME)
  at = putNumber(buf, at, time)
  if (worker !== undefined) {
    at = put(buf, at, WORKER)
    at = putNumber(buf, at, worker)
  }
  at = put(buf, at, MSG)
  at = put(buf, at, methodAndRoute(l.method, l.route))
  at = put(buf, at, STATUS)
  at = putNumber(buf, at, l.status)
  at = put(buf, at, DURATION)
  at = putNumber(buf, at, l.durationMs)
  at = put(buf, at, REQUEST_ID)
  at = putString(buf, at, l.requestId)
  if (l.accountId !== undefined) {
    at = put(buf, at, ACCOUNT_ID)
    at = putString(buf, at, l.accountId)
  }
  if (l.keyId !== undefined) {
    at = put(buf, at, KEY_ID)
    at = putString(buf, at, l.keyId)
  }
  if (l.userId !== undefined) {
    at = put(buf, at, USER_ID)
    at = putString(buf, at, l.userId)
  }
  if (l.aborted) at = put(buf, at, ABORTED)
  buf[at] = 0x7d // }
  buf[at + 1] = 0x0a // \n
  return at + 2
}

const ascii = (s: string): Buffer => Buffer.from(s, 'latin1')
const LEVEL_TIME = ascii('{"level":30,"time":')
const WORKER = ascii(',"worker":')
const MSG = ascii(',"msg":"request"')
const STATUS = ascii(',"status":')
const DURATION = ascii(',"durationMs":')
const REQUEST_ID = ascii(',"requestId":')
const ACCOUNT_ID = ascii(',"accountId":')
const KEY_ID = ascii(',"keyId":')
const USER_ID = ascii(',"userId":')
const ABORTED = ascii(',"aborted":true')

function put(buf: Buffer, at: number, bytes: Uint8Array): number {
  buf.set(bytes, at)
  return at + bytes.length
}

/**
 * A number as `JSON.stringify` writes it. Integers below 2^53 and non-negative numbers of at most two decimals (the
 * durations, rounded to hundredths) are written digit by digit; any other number by `String()`.
 */
function putNumber(buf: Buffer, at: number, n: number): number {
  if (Number.isInteger(n) && n >= 0 && n <= Number.MAX_SAFE_INTEGER) return putInteger(buf, at, n)
  const hundredths = Math.round(n * 100)
  if (n > 0 && n < 1e12 && hundredths / 100 === n) {
    const whole = Math.floor(hundredths / 100)
    const frac = hundredths - whole * 100
    at = putInteger(buf, at, whole)
    buf[at++] = 0x2e // .
    buf[at++] = 0x30 + ((frac / 10) | 0)
    if (frac % 10 !== 0) buf[at++] = 0x30 + (frac % 10)
    return at
  }
  return at + buf.write(Number.isFinite(n) ? String(n) : 'null', at, 'latin1')
}

/** A non-negative integer below 2^53 in decimal: the part above 10^9 first, then nine digits. */
function putInteger(buf: Buffer, at: number, n: number): number {
  if (n < 1e9) return putSmall(buf, at, n)
  const high = Math.floor(n / 1e9)
  at = putInteger(buf, at, high)
  let low = n - high * 1e9
  for (let i = at + 8; i >= at; i--) {
    const q = (low / 10) | 0
    buf[i] = 0x30 + low - q * 10
    low = q
  }
  return at + 9
}

/** A non-negative integer below 10^9 in decimal. */
function putSmall(buf: Buffer, at: number, n: number): number {
  let digits = 1
  for (let m = n; m >= 10; m = (m / 10) | 0) digits++
  for (let i = at + digits - 1; i >= at; i--) {
    const q = (n / 10) | 0
    buf[i] = 0x30 + n - q * 10
    n = q
  }
  return at + digits
}

/**
 * A string as JSON: one of printable ASCII other than `"` and `\` (ids, request ids, route templates) byte by byte;
 * any other by `JSON.stringify`, as UTF-8.
 */
function putString(buf: Buffer, at: number, s: string): number {
  const start = at
  buf[at++] = 0x22 // "
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return start + buf.write(JSON.stringify(s), start, 'utf8')
    buf[at++] = c
  }
  buf[at++] = 0x22
  return at
}

/** `,"method":…,"route":…` by method and route: a closed set (route templates, HTTP methods), encoded once each. */
const fragments = new Map<string, Map<string, Buffer>>()
const MAX_FRAGMENTS = 2000
let fragmentCount = 0

function methodAndRoute(method: string, route: string): Buffer {
  let byRoute = fragments.get(method)
  const known = byRoute?.get(route)
  if (known !== undefined) return known
  const text = `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`
  const bytes = Buffer.from(text, 'utf8')
  if (fragmentCount < MAX_FRAGMENTS) {
    if (!byRoute) fragments.set(method, (byRoute = new Map()))
    byRoute.set(route, bytes)
    fragmentCount++
  }
  return bytes
}

/** The line of an answered request; every property present (undefined when unknown), so every line has one shape. */
export function accessLine(req: IncomingMessage, status: number, startedAt: number, requestId: string, aborted: boolean): AccessLine {
  const r = factsOf(req)
  const p = r[PRINCIPAL]
  return {
    msg: 'request',
    method: req.method ?? 'GET',
    route: r[ROUTE] ?? '(unmatched)',
    status,
    durationMs: Math.round((performance.now() - startedAt) * 100) / 100,
    requestId,
    accountId: p?.accountId,
    keyId: p?.credentialId,
    userId: p?.userId || undefined,
    aborted: aborted ? true : undefined,
  }
}

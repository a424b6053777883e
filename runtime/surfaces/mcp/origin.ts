/**
 * DNS-rebinding protection for MCP: a web page on another site must not be able to drive a local MCP server
 * through the user's browser. Checked before anything else; a failure is 403.
 *
 * - Host: when `allowedHosts` is configured, the request's host name must be one of them. Otherwise, on a loopback
 *   listener (the default `127.0.0.1`), it must be a loopback name (`localhost`, `127.0.0.1`, `[::1]`, any port) —
 *   a rebound domain (`evil.example` resolving to 127.0.0.1) arrives with its own name; beyond loopback, any host.
 * - Origin: absent for non-browser clients (accepted). When present, it must be in `allowedOrigins`, or be a
 *   loopback origin on a loopback host (a local tool such as an inspector).
 */
import type { IncomingMessage } from 'node:http'

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1'])

export function isLoopbackHost(hostname: string): boolean {
  return LOOPBACK.has(hostname.toLowerCase())
}

/** The host name of a Host header value (`[::1]:3000` → `[::1]`, `example.com:443` → `example.com`). */
function hostname(hostHeader: string): string {
  const h = hostHeader.trim().toLowerCase()
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1)
  const colon = h.lastIndexOf(':')
  return colon >= 0 ? h.slice(0, colon) : h
}

export interface OriginPolicy {
  /** The address the listener is bound to. */
  bindHost: string
  allowedHosts: readonly string[]
  allowedOrigins: readonly string[]
}

/** undefined when the request may proceed; otherwise why it is refused. */
export function refuseHostOrOrigin(req: IncomingMessage, policy: OriginPolicy): string | undefined {
  const host = hostname(req.headers.host ?? '')
  const loopbackListener = isLoopbackHost(policy.bindHost) || policy.bindHost.startsWith('127.')
  if (policy.allowedHosts.length > 0) {
    if (!policy.allowedHosts.includes(host)) return `Host ${host || '(none)'} is not allowed.`
  } else if (loopbackListener && !isLoopbackHost(host)) {
    return `Host ${host || '(none)'} is not allowed on a loopback listener.`
  }
  const origin = req.headers.origin
  if (origin === undefined) return undefined
  const normalized = origin.toLowerCase().replace(/\/+$/, '')
  if (policy.allowedOrigins.includes(normalized)) return undefined
  let originHost: string
  try {
    originHost = new URL(normalized).hostname
  } catch {
    return 'Origin is malformed.'
  }
  if (isLoopbackHost(originHost) && isLoopbackHost(host)) return undefined
  return `Origin ${normalized.slice(0, 100)} is not allowed.`
}

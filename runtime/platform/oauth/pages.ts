/**
 * The server-rendered pages of sign-in: the sign-in form, the consent page and the error page. Plain HTML with
 * inline styles and no script or external asset; every value is escaped; a strict Content-Security-Policy and
 * `frame-ancestors 'none'` (no framing, against clickjacking) go with every page.
 */
import type { ServerResponse } from 'node:http'

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)
}

const STYLE = `
body{font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;background:#f4f6f8;color:#1f2933;margin:0}
main{max-width:420px;margin:8vh auto;background:#fff;border-radius:10px;box-shadow:0 2px 12px rgba(0,0,0,.08);padding:32px}
h1{font-size:22px;margin:0 0 8px}p{margin:8px 0}.muted{color:#52606d;font-size:14px}
label{display:block;margin:16px 0 4px;font-weight:600}input[type=email],input[type=password]{width:100%;box-sizing:border-box;padding:10px;border:1px solid #cbd2d9;border-radius:6px;font-size:16px}
button{margin-top:20px;padding:10px 18px;border:0;border-radius:6px;font-size:16px;cursor:pointer;background:#0b69a3;color:#fff}
button.secondary{background:#e4e7eb;color:#1f2933;margin-left:8px}a.button{display:inline-block;margin-top:12px;padding:10px 18px;border-radius:6px;background:#323f4b;color:#fff;text-decoration:none}
ul{padding-left:20px}.error{background:#fde8e8;color:#8a1c1c;padding:10px;border-radius:6px}code{background:#f0f4f8;padding:1px 4px;border-radius:4px}
hr{border:0;border-top:1px solid #e4e7eb;margin:24px 0}`

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)} · orgscan</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`
}

export function sendPage(res: ServerResponse, status: number, title: string, body: string, headers: Record<string, string> = {}): void {
  const html = page(title, body)
  res.writeHead(status, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': Buffer.byteLength(html),
    'Cache-Control': 'no-store',
    'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  })
  res.end(html)
}

export const SCOPE_TEXT: Record<string, string> = {
  'mcp:read': 'Read the scan data of the orgs you can see (fields, objects, issues, permissions, …)',
  'mcp:write': 'Change data through tools that change data',
}

export interface SignInView {
  requestId: string
  csrf: string
  clientName: string
  email?: string
  error?: string
  password: boolean
  upstreamName?: string
}

export function signInPage(v: SignInView): string {
  const err = v.error ? `<p class="error" role="alert">${escapeHtml(v.error)}</p>` : ''
  const form = v.password
    ? `<form method="post" action="/oauth/sign-in">
<input type="hidden" name="request" value="${escapeHtml(v.requestId)}"><input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(v.email ?? '')}">
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`
    : ''
  const upstream = v.upstreamName
    ? `${v.password ? '<hr>' : ''}<a class="button" id="upstream" href="/oauth/upstream?request=${encodeURIComponent(v.requestId)}">Sign in with ${escapeHtml(v.upstreamName)}</a>`
    : ''
  return `<h1>Sign in to orgscan</h1><p class="muted"><strong>${escapeHtml(v.clientName)}</strong> asks to use your orgscan account.</p>${err}${form}${upstream}`
}

export interface ConsentView {
  requestId: string
  csrf: string
  clientName: string
  redirectHost: string
  scopes: readonly string[]
  email: string
}

export function consentPage(v: ConsentView): string {
  const scopes = v.scopes.map((s) => `<li><code>${escapeHtml(s)}</code> — ${escapeHtml(SCOPE_TEXT[s] ?? s)}</li>`).join('')
  return `<h1>Allow access?</h1>
<p><strong>${escapeHtml(v.clientName)}</strong> wants to access orgscan as <strong>${escapeHtml(v.email)}</strong>.</p>
<p>After you approve, you will be sent to <strong>${escapeHtml(v.redirectHost)}</strong>. Approve only if you started this from an application you trust there.</p>
<p>It will be able to:</p><ul>${scopes}</ul>
<p class="muted">This application registered itself; orgscan does not vouch for it. It sees only the orgs you can see.</p>
<form method="post" action="/oauth/consent">
<input type="hidden" name="request" value="${escapeHtml(v.requestId)}"><input type="hidden" name="csrf" value="${escapeHtml(v.csrf)}">
<button type="submit" name="decision" value="approve">Approve</button><button class="secondary" type="submit" name="decision" value="deny">Deny</button></form>`
}

export function errorPage(message: string): string {
  return `<h1>Sign-in cannot continue</h1><p class="error" role="alert">${escapeHtml(message)}</p><p class="muted">Start again from the application you were using.</p>`
}

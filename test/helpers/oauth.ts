/**
 * OAuth helpers for tests: a minimal browser (one cookie jar, manual redirects, forms read from the served HTML)
 * that walks the sign-in and consent pages as a user would, and PKCE values. The pages themselves are also driven
 * in a real browser by test/oauth/oauth-pages.test.ts.
 */
import { createHash, randomBytes } from 'node:crypto'
import { Agent, fetch as undiciFetch } from 'undici'

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

export interface Page {
  status: number
  headers: Headers
  text: string
  url: string
}

/** A cookie-keeping client that does not follow redirects. */
export class Browser {
  cookies = new Map<string, string>()
  private readonly agent?: Agent

  /** `localAddress`: the loopback address the browser connects from (127.0.0.x), to be told apart per address. */
  constructor(opts: { localAddress?: string } = {}) {
    if (opts.localAddress) this.agent = new Agent({ localAddress: opts.localAddress })
  }

  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Page> {
    const headers: Record<string, string> = {}
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ')
    let body: string | undefined
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded'
      body = new URLSearchParams(init.form).toString()
    }
    const r = this.agent
      ? await undiciFetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual', dispatcher: this.agent })
      : await fetch(url, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' })
    for (const c of r.headers.getSetCookie()) {
      const [pair] = c.split(';')
      const eq = pair.indexOf('=')
      this.cookies.set(pair.slice(0, eq), pair.slice(eq + 1))
    }
    return { status: r.status, headers: r.headers, text: await r.text(), url }
  }

  /** GET, following same-service redirects until a page or a redirect elsewhere. */
  async open(url: string, stopAt?: string): Promise<Page> {
    let page = await this.request(url)
    while (page.status === 303 || page.status === 302) {
      const next = new URL(page.headers.get('location')!, page.url).toString()
      if (stopAt && next.startsWith(stopAt)) return { ...page, url: next }
      page = await this.request(next)
    }
    return page
  }

  /** Submits the page's form (the one containing `marker`), with the page's hidden fields and `fields`. */
  async submit(page: Page, fields: Record<string, string>, marker = '<form'): Promise<Page> {
    const at = page.text.indexOf(marker)
    const form = page.text.slice(page.text.lastIndexOf('<form', at >= 0 ? at : 0))
    const action = /action="([^"]*)"/.exec(form)?.[1] || page.url
    const hidden: Record<string, string> = {}
    for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\s*\/?>/g)) hidden[m[1]] = m[2].replace(/&amp;/g, '&')
    return this.request(new URL(action, page.url).toString(), { form: { ...hidden, ...fields } })
  }
}

export interface AuthorizeParams {
  clientId: string
  redirectUri: string
  challenge?: string
  method?: string
  state?: string
  scope?: string
  resource?: string
}

export function authorizeUrl(issuer: string, p: AuthorizeParams): string {
  const u = new URL(`${issuer}/oauth/authorize`)
  u.searchParams.set('response_type', 'code')
  u.searchParams.set('client_id', p.clientId)
  u.searchParams.set('redirect_uri', p.redirectUri)
  if (p.challenge !== undefined) u.searchParams.set('code_challenge', p.challenge)
  if (p.method !== undefined) u.searchParams.set('code_challenge_method', p.method)
  if (p.state !== undefined) u.searchParams.set('state', p.state)
  if (p.scope !== undefined) u.searchParams.set('scope', p.scope)
  if (p.resource !== undefined) u.searchParams.set('resource', p.resource)
  return u.toString()
}

/**
 * Signs in with e-mail and password (approving consent when asked) and returns the redirect back to the client.
 */
export async function signIn(browser: Browser, url: string, user: { email: string; password: string }, redirectUri: string, consent: 'approve' | 'deny' = 'approve'): Promise<URL> {
  const form = await browser.open(url, redirectUri)
  if (form.status !== 200) throw new Error(`sign-in page: ${form.status} ${form.text.slice(0, 200)}`)
  let page = await browser.submit(form, { email: user.email, password: user.password })
  if (page.status === 200 && page.text.includes('action="/oauth/consent"')) page = await browser.submit(page, { decision: consent }, 'action="/oauth/consent"')
  if (page.status !== 303) throw new Error(`after sign-in: ${page.status} ${page.text.slice(0, 300)}`)
  return new URL(page.headers.get('location')!)
}

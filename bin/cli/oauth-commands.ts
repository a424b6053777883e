/** `orgscan users …` and `orgscan clients …`: people who sign in, and the OAuth clients an administrator issues. */
import { UsageError, parse, type Parsed } from './args.ts'
import { table } from './help.ts'

type Admin = (op: string, args: Record<string, unknown>) => Promise<unknown>
type Print = (json: boolean, value: unknown, text: () => string) => void

/** Every value of a repeatable option (`--scope a --scope b`, or `--scope "a b"`). */
function many(v: Parsed['values'][string] | string[]): string[] {
  if (v === undefined || typeof v === 'boolean') return []
  return (Array.isArray(v) ? v : [v]).flatMap((s) => s.split(/[\s,]+/)).filter((s) => s !== '')
}

export async function usersCommand(args: string[], admin: Admin, print: Print, readStdin: (() => Promise<string>) | undefined): Promise<void> {
  const action = args[0]
  const { values, positionals } = parse(
    args.slice(1),
    { account: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' }, org: { type: 'string' }, admin: { type: 'boolean' }, 'password-stdin': { type: 'boolean' } },
    ['grant', 'revoke-org', 'revoke-tokens'].includes(action) ? 1 : 0,
  )
  type User = { id: string; email: string; accountId: string; orgs: string[]; password?: string }
  const json = !!values.json
  if (action === 'create') {
    if (!values.account || !values.email) throw new UsageError('users create needs --account ID and --email E.')
    let password: string | undefined
    if (values['password-stdin']) {
      if (!readStdin) throw new UsageError('--password-stdin needs a standard input.')
      password = (await readStdin()).replace(/\r?\n$/, '')
    }
    const u = (await admin('users.create', { account: String(values.account), email: String(values.email), name: values.name === undefined ? undefined : String(values.name), password, admin: values.admin === true ? true : undefined })) as User
    // A new user sees no org until one is granted: say how, with its id, so that its first sign-in is not an empty list.
    return print(json, u, () => [
      `created user ${u.id} (${u.email}) in account ${u.accountId}`,
      ...(u.password ? [`one-time password: ${u.password}`, '(shown only now; the user signs in with it)'] : []),
      `it sees no org until you grant one: orgscan users grant ${u.id} --org ORGID (the account's orgs: orgscan accounts list)`,
    ].join('\n'))
  }
  if (action === 'list') {
    if (!values.account) throw new UsageError('users list needs --account ID.')
    const list = (await admin('users.list', { account: String(values.account) })) as Array<Record<string, unknown>>
    return print(json, list, () => table(list, ['id', 'email', 'name', 'isAdmin', 'orgs']))
  }
  if (action === 'grant' || action === 'revoke-org') {
    if (!positionals[0] || !values.org) throw new UsageError(`users ${action} needs the USER id and --org ORGID.`)
    const u = (await admin(action === 'grant' ? 'users.grant' : 'users.revoke-org', { user: positionals[0], org: String(values.org) })) as User & { alreadyRevoked?: boolean }
    const sees = `user ${u.id} (${u.email}) sees: ${u.orgs.length ? u.orgs.join(', ') : 'no org'}`
    return print(json, u, () => (u.alreadyRevoked ? `user ${u.id} had no grant of org ${String(values.org)}; nothing changed\n${sees}` : sees))
  }
  if (action === 'revoke-tokens') {
    if (!positionals[0]) throw new UsageError('users revoke-tokens needs the USER id.')
    const u = (await admin('users.revoke-tokens', { user: positionals[0] })) as User
    return print(json, u, () => `every token of user ${u.id} (${u.email}) is revoked`)
  }
  throw new UsageError('users takes create, list, grant, revoke-org or revoke-tokens. Run "orgscan users --help".')
}

export async function clientsCommand(args: string[], admin: Admin, print: Print): Promise<void> {
  const action = args[0]
  const { values, positionals } = parse(
    args.slice(1),
    {
      account: { type: 'string' },
      name: { type: 'string' },
      'redirect-uri': { type: 'string', multiple: true },
      scope: { type: 'string', multiple: true },
      'token-exchange': { type: 'boolean' },
    },
    action === 'update' || action === 'revoke' ? 1 : 0,
  )
  type Client = { clientId: string; clientSecret?: string; name: string; redirectUris: string[]; scopes: string[] }
  const json = !!values.json
  const uris = many(values['redirect-uri'] as string[] | undefined)
  const scopes = many(values.scope as string[] | undefined)
  if (action === 'create') {
    if (!values.account || !values.name) throw new UsageError('clients create needs --account ID, --name N, --redirect-uri U… and --scope S….')
    const c = (await admin('clients.create', { account: String(values.account), name: String(values.name), redirectUris: uris, scopes, tokenExchange: values['token-exchange'] === true ? true : undefined })) as Client
    return print(json, c, () => `client_id:     ${c.clientId}\nclient_secret: ${c.clientSecret}\n(the secret is shown only now; enter both in the MCP client)\nredirect URIs: ${c.redirectUris.join(' ')}\nscopes:        ${c.scopes.join(' ')}`)
  }
  if (action === 'list') {
    if (!values.account) throw new UsageError('clients list needs --account ID.')
    const list = (await admin('clients.list', { account: String(values.account) })) as Array<Record<string, unknown>>
    return print(json, list, () => table(list, ['clientId', 'name', 'scopes', 'redirectUris', 'revoked']))
  }
  if (action === 'update') {
    if (!positionals[0]) throw new UsageError('clients update needs the CLIENT id.')
    if (values.name === undefined && uris.length === 0 && scopes.length === 0) throw new UsageError('clients update needs --name, --redirect-uri or --scope.')
    const c = (await admin('clients.update', { clientId: positionals[0], name: values.name === undefined ? undefined : String(values.name), redirectUris: uris.length ? uris : undefined, scopes: scopes.length ? scopes : undefined })) as Client
    return print(json, c, () => `updated ${c.clientId}: scopes ${c.scopes.join(' ')}; redirect URIs ${c.redirectUris.join(' ')}`)
  }
  if (action === 'revoke') {
    if (!positionals[0]) throw new UsageError('clients revoke needs the CLIENT id.')
    const c = (await admin('clients.revoke', { clientId: positionals[0] })) as Client & { revokedAt: string; alreadyRevoked: boolean }
    return print(json, c, () => (c.alreadyRevoked ? `${c.clientId} was already revoked at ${c.revokedAt}; nothing changed` : `revoked ${c.clientId}; its tokens stop working`))
  }
  throw new UsageError('clients takes create, list, update or revoke. Run "orgscan clients --help".')
}

/**
 * The administrative operations of the `orgscan` command, as one table: the CLI runs them on the database itself, or,
 * while a server holds the embedded database, sends them to that server's admin socket (admin-socket.ts), which runs
 * them here. Arguments are validated the same way on both paths; an operation that changes what a running server
 * caches tells it (`onChange`), so a limit change or a revoked key applies at once in that process.
 */
import * as v from 'valibot'
import type postgres from 'postgres'
import type { CompiledResource } from '../core/registry.ts'
import { AdminError, createAccount, createKey, listAccounts, listKeys, revokeKey, updateAccount } from './admin.ts'
import { importFile, ImportError } from './import.ts'
import { exportScan } from './bundle/export-scan.ts'
import type { ProgressSink } from './bundle/progress.ts'
import { issueClient, listClients, revokeClient, updateClient } from './oauth/clients.ts'
import { createSignInUser, grantOrg, linkEmailDomain, listUsers, revokeOrg, revokeUserTokens } from './oauth/users.ts'
import type { Clock } from '../core/config-types.ts'
import { checksumProblem, orgIdFormProblem } from '../core/org-id.ts'
import type { Surface } from '../core/plan.ts'
import { changeVersions, deprecatedTargets, listVersions } from './versions/operations.ts'
import type { VersionChange } from './versions/rules.ts'
import { claimNotices, confirmNotices, planNotices, releaseNotices, type Notice } from './versions/notices.ts'

export interface AdminContext {
  sql: postgres.Sql
  /** Needed by the operations of NEEDS_PEPPER only (they hash a new secret); the CLI resolves it for those alone. */
  pepper?: string
  resources: readonly CompiledResource[]
  defaults: { dailyLimit: number; monthlyLimit: number }
  progress?: (line: string) => void
  /** Which database `sql` is (imports write large tables with COPY on PostgreSQL); default embedded. */
  dbKind?: 'postgres' | 'embedded'
  /** Progress of imports and exports. */
  events?: ProgressSink
  /** Where an export writes its bundle (awaited: backpressure). */
  output?: (chunk: string) => Promise<void> | void
  /** Called after a change a running server must not serve stale: an account's settings, a key, OAuth clients or users. */
  onChange?: (change: { account?: string; key?: string; oauth?: boolean }) => void
  /** "Today" for the version lifecycle: the serving process's clock, or the command's. Default Date.now. */
  clock?: Clock
  /** After a change of the version table: the serving process re-reads it before the command is answered. */
  versionsChanged?: () => Promise<void>
  /** Before notices are planned: the serving process writes the calls it recorded but has not written yet. */
  flushUsage?: () => Promise<void>
}

const id = v.pipe(v.string(), v.regex(/^[1-9][0-9]{0,17}$/, 'must be a positive integer'))
const limit = v.optional(v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(2_000_000_000)))
const name = v.pipe(v.string(), v.minLength(1), v.maxLength(200))
const text = (max: number) => v.pipe(v.string(), v.minLength(1), v.maxLength(max))
const strings = (max: number) => v.pipe(v.array(text(2000)), v.maxLength(max))
const email = v.pipe(v.string(), v.maxLength(320), v.regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'must be an e-mail address'))
const surface = v.optional(v.picklist(['rest', 'mcp']))
const version = v.pipe(v.string(), v.regex(/^v[1-9][0-9]{0,3}$/, 'must be v1, v2, …'))
const day = v.pipe(v.string(), v.maxLength(10))
const notices = v.pipe(v.array(v.strictObject({ surface: v.picklist(['rest', 'mcp']), version, sunsetDate: v.pipe(v.string(), v.isoDate()) })), v.minLength(1), v.maxLength(20))
const now = (c: AdminContext) => (c.clock ?? Date.now)()
/** What makes a string no org id (a character, its length, or its checksum), said to follow the option's name. */
const orgIdProblem = (s: string) => orgIdFormProblem(s) ?? (checksumProblem(s) === undefined ? undefined : `is no org id: ${checksumProblem(s)}`)
const orgId = v.pipe(v.string(), v.check((s) => orgIdProblem(s) === undefined, (issue) => orgIdProblem(String(issue.input)) ?? 'is no org id'))

/** The operations that hash a secret with the pepper: on PostgreSQL the CLI runs them only with ORGSCAN_PEPPER(_FILE). */
export const NEEDS_PEPPER: ReadonlySet<string> = new Set(['keys.create', 'clients.create'])

function pepperOf(c: AdminContext): string {
  if (c.pepper === undefined) throw new Error('An operation that needs the pepper was run without it.')
  return c.pepper
}

/** A change of the version table; the serving process re-reads it before answering. */
async function changeTable(c: AdminContext, a: { surface?: Surface }, change: VersionChange) {
  const r = await changeVersions(c.sql, a.surface, change, now(c))
  await c.versionsChanged?.()
  return r
}

/** An operation after which a running server drops what it cached of OAuth clients, users and grants. */
const changingOAuth = <A, R>(run: (c: AdminContext, a: A) => Promise<R>) => async (c: AdminContext, a: A): Promise<R> => {
  const r = await run(c, a)
  c.onChange?.({ oauth: true })
  return r
}

/** Every operation: its argument schema and what it does. */
export const ADMIN_OPS = {
  'accounts.create': {
    args: v.strictObject({ name, dailyLimit: limit, monthlyLimit: limit, email: v.optional(email) }),
    run: (c: AdminContext, a: { name: string; dailyLimit?: number; monthlyLimit?: number; email?: string }) =>
      createAccount(c.sql, { name: a.name, dailyLimit: a.dailyLimit ?? c.defaults.dailyLimit, monthlyLimit: a.monthlyLimit ?? c.defaults.monthlyLimit, email: a.email }),
  },
  'accounts.list': { args: v.strictObject({}), run: (c: AdminContext) => listAccounts(c.sql) },
  'accounts.update': {
    args: v.strictObject({ id, name: v.optional(name), dailyLimit: limit, monthlyLimit: limit, enhancedMcpSecurity: v.optional(v.boolean()), emailDomain: v.optional(text(253)), email: v.optional(v.union([email, v.literal('')])) }),
    run: async (c: AdminContext, a: { id: string; name?: string; dailyLimit?: number; monthlyLimit?: number; enhancedMcpSecurity?: boolean; emailDomain?: string; email?: string }) => {
      if (a.emailDomain !== undefined) await linkEmailDomain(c.sql, a.id, a.emailDomain)
      const r = await updateAccount(c.sql, a.id, a)
      c.onChange?.({ account: a.id })
      return r
    },
  },
  'users.create': {
    args: v.strictObject({ account: id, email: text(320), name: v.optional(name), password: v.optional(text(200)), admin: v.optional(v.boolean()) }),
    run: (c: AdminContext, a: { account: string; email: string; name?: string; password?: string; admin?: boolean }) => createSignInUser(c.sql, a),
  },
  'users.list': { args: v.strictObject({ account: id }), run: (c: AdminContext, a: { account: string }) => listUsers(c.sql, a.account) },
  'users.grant': {
    args: v.strictObject({ user: id, org: orgId }),
    run: changingOAuth((c: AdminContext, a: { user: string; org: string }) => grantOrg(c.sql, a.user, a.org)),
  },
  'users.revoke-org': {
    args: v.strictObject({ user: id, org: orgId }),
    run: changingOAuth((c: AdminContext, a: { user: string; org: string }) => revokeOrg(c.sql, a.user, a.org)),
  },
  'users.revoke-tokens': {
    args: v.strictObject({ user: id }),
    run: changingOAuth((c: AdminContext, a: { user: string }) => revokeUserTokens(c.sql, a.user, new Date())),
  },
  'clients.create': {
    args: v.strictObject({ account: id, name, redirectUris: strings(20), scopes: strings(10), tokenExchange: v.optional(v.boolean()) }),
    run: async (c: AdminContext, a: { account: string; name: string; redirectUris: string[]; scopes: string[]; tokenExchange?: boolean }) => issueClient(c.sql, pepperOf(c), a),
  },
  'clients.list': { args: v.strictObject({ account: id }), run: (c: AdminContext, a: { account: string }) => listClients(c.sql, a.account) },
  'clients.update': {
    args: v.strictObject({ clientId: text(64), name: v.optional(name), redirectUris: v.optional(strings(20)), scopes: v.optional(strings(10)) }),
    run: changingOAuth((c: AdminContext, a: { clientId: string; name?: string; redirectUris?: string[]; scopes?: string[] }) => updateClient(c.sql, a.clientId, a)),
  },
  'clients.revoke': {
    args: v.strictObject({ clientId: text(64) }),
    run: changingOAuth((c: AdminContext, a: { clientId: string }) => revokeClient(c.sql, a.clientId)),
  },
  'keys.create': {
    args: v.strictObject({ account: id, name: v.optional(name) }),
    run: async (c: AdminContext, a: { account: string; name?: string }) => {
      const k = await createKey(c.sql, pepperOf(c), a.account, { name: a.name ?? null })
      c.onChange?.({ key: k.keyId })
      return { keyId: k.keyId, secret: k.secret, accountId: k.accountId }
    },
  },
  'keys.list': { args: v.strictObject({ account: id }), run: (c: AdminContext, a: { account: string }) => listKeys(c.sql, a.account) },
  'keys.revoke': {
    args: v.strictObject({ keyId: v.pipe(v.string(), v.maxLength(64)) }),
    run: async (c: AdminContext, a: { keyId: string }) => {
      const k = await revokeKey(c.sql, a.keyId)
      c.onChange?.({ key: a.keyId })
      return k
    },
  },
  'versions.list': {
    args: v.strictObject({ surface }),
    run: (c: AdminContext, a: { surface?: Surface }) => listVersions(c.sql, a.surface, now(c)),
  },
  'versions.add': {
    args: v.strictObject({ surface, name: version, sunsetDate: v.optional(day) }),
    run: (c: AdminContext, a: { surface?: Surface; name: string; sunsetDate?: string }) => changeTable(c, a, { kind: 'add', name: a.name, sunsetDate: a.sunsetDate }),
  },
  'versions.deprecate': {
    args: v.strictObject({ surface, name: version, sunsetDate: day }),
    run: (c: AdminContext, a: { surface?: Surface; name: string; sunsetDate: string }) => changeTable(c, a, { kind: 'deprecate', name: a.name, sunsetDate: a.sunsetDate }),
  },
  'versions.sunset': {
    args: v.strictObject({ surface, name: version }),
    run: (c: AdminContext, a: { surface?: Surface; name: string }) => changeTable(c, a, { kind: 'sunset', name: a.name }),
  },
  'versions.recipients': {
    args: v.strictObject({ surface, name: version }),
    run: async (c: AdminContext, a: { surface?: Surface; name: string }) => {
      const targets = await deprecatedTargets(c.sql, a.surface, a.name, now(c))
      await c.flushUsage?.()
      return planNotices(c.sql, targets, now(c))
    },
  },
  'versions.claim': {
    args: v.strictObject({ recipient: email, notices, retry: v.boolean() }),
    run: (c: AdminContext, a: { recipient: string; notices: Notice[]; retry: boolean }) => claimNotices(c.sql, a.recipient.toLowerCase(), a.notices, a.retry),
  },
  'versions.sent': {
    args: v.strictObject({ recipient: email, notices, messageId: v.nullable(v.pipe(v.string(), v.maxLength(998))) }),
    run: (c: AdminContext, a: { recipient: string; notices: Notice[]; messageId: string | null }) => confirmNotices(c.sql, a.recipient.toLowerCase(), a.notices, a.messageId).then(() => ({ ok: true })),
  },
  'versions.release': {
    args: v.strictObject({ recipient: email, notices }),
    run: (c: AdminContext, a: { recipient: string; notices: Notice[] }) => releaseNotices(c.sql, a.recipient.toLowerCase(), a.notices).then(() => ({ ok: true })),
  },
  import: {
    args: v.strictObject({ account: id, file: v.pipe(v.string(), v.minLength(1), v.maxLength(4096)), again: v.optional(v.boolean()) }),
    run: async (c: AdminContext, a: { account: string; file: string; again?: boolean }) => {
      const r = await importFile(c.sql, c.resources, a.account, a.file, { copy: c.dbKind === 'postgres', progress: c.events, again: a.again })
      // The org's latest scan changed: the serving process drops its copy (hot reads) at once.
      c.onChange?.({ account: a.account })
      return r
    },
  },
  export: {
    args: v.strictObject({ org: orgId, scan: v.optional(id), format: v.picklist(['json', 'ndjson']) }),
    run: async (c: AdminContext, a: { org: string; scan?: string; format: 'json' | 'ndjson' }) => {
      if (!c.output) throw new AdminError('export streams its bundle: ask for framed replies.')
      return exportScan(c.sql, c.resources, { orgId: a.org, scanId: a.scan, format: a.format }, c.output, c.events)
    },
  },
} as const

export type AdminOp = keyof typeof ADMIN_OPS

/**
 * The first problem of `args` for `op`, with the argument it concerns (`account`, `dailyLimit`, …), or undefined; the
 * CLI checks its arguments with it before any call, to name its own option and exit as a usage error.
 */
export function adminArgsProblem(op: AdminOp, args: unknown): { argument: string; problem: string; given: unknown } | undefined {
  const parsed = v.safeParse(ADMIN_OPS[op].args, args)
  if (parsed.success) return undefined
  const issue = parsed.issues[0]
  return { argument: String(issue.path?.[0]?.key ?? ''), problem: issue.message, given: issue.input }
}

/** Validates the arguments and runs the operation; throws AdminError for bad arguments. */
export async function runAdminOp(c: AdminContext, op: string, args: unknown): Promise<unknown> {
  if (!Object.hasOwn(ADMIN_OPS, op)) throw new AdminError(`Unknown operation ${JSON.stringify(op).slice(0, 64)}.`)
  const spec = ADMIN_OPS[op as AdminOp]
  const parsed = v.safeParse(spec.args, args)
  if (!parsed.success) throw new AdminError(`Invalid arguments for ${op}: ${v.summarize(parsed.issues).split('\n')[0]}`)
  return (spec.run as (c: AdminContext, a: unknown) => Promise<unknown>)(c, parsed.output)
}

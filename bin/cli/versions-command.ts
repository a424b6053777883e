/**
 * `orgscan versions …`: the version table (list, add, deprecate, sunset) and deprecation notices (notify). Changes
 * apply to every running process (runtime/platform/versions/live.ts); see docs/versioning.md.
 */
import { ConfigError, type Config } from '../../runtime/platform/config.ts'
import { AdminError } from '../../runtime/platform/admin.ts'
import type { ListedVersion } from '../../runtime/platform/versions/operations.ts'
import type { Notice } from '../../runtime/platform/versions/notices.ts'
import { createMailer } from '../../runtime/platform/versions/mailer.ts'
import { notifyCallers, type AdminCall, type NotifyReport } from '../../runtime/platform/versions/notify.ts'
import { SURFACE_NAME } from '../../runtime/platform/versions/rules.ts'
import { UsageError, parse } from './args.ts'
import { table } from './help.ts'
import type { CliIO } from './main.ts'

type Session = <T>(fn: (call: AdminCall) => Promise<T>) => Promise<T>
type Print = (json: boolean, value: unknown, text: () => string) => void

const ACTIONS = ['list', 'add', 'deprecate', 'sunset', 'notify']

function versionTable(rows: ListedVersion[], callers: boolean): string {
  const shown = rows.map((r) => ({ ...r, surface: SURFACE_NAME[r.surface], releasedAt: r.releasedAt.slice(0, 10) }))
  return table(shown, ['surface', 'name', 'status', 'sunsetDate', 'releasedAt', ...(callers ? ['callers'] : [])])
}

const noticeText = (n: Notice) => `${SURFACE_NAME[n.surface]} ${n.version} (sunset ${n.sunsetDate})`

function reportText(r: NotifyReport): string {
  const lines = [`notices: ${r.notices.map(noticeText).join(', ')}`]
  const who = (xs: Array<{ to: string }>) => xs.map((x) => x.to).join(', ')
  lines.push(`sent ${r.sent.length}${r.sent.length ? `: ${who(r.sent)}` : ''}`)
  if (r.alreadySent.length) lines.push(`already sent by an earlier run: ${r.alreadySent.length}`)
  if (r.unconfirmed.length) lines.push(`interrupted in an earlier run, not resent (the e-mail may have gone out; --retry-unconfirmed resends): ${who(r.unconfirmed)}`)
  for (const f of r.failed) lines.push(`failed: ${f.to}: ${f.error}${f.unconfirmed ? ' (may have been sent; not retried without --retry-unconfirmed)' : ' (not sent; a later run retries)'}`)
  if (r.withoutAddress.length) {
    lines.push('without an address (set one with orgscan accounts update ID --email E, then run again):')
    for (const o of r.withoutAddress) {
      const keys = [...new Set(o.calls.map((c) => c.keyId ?? c.userEmail))].join(', ')
      lines.push(`  account ${o.accountId} (${o.accountName}): ${keys}`)
    }
  }
  return lines.join('\n')
}

export async function versionsCommand(args: string[], config: Config, io: CliIO, session: Session, print: Print): Promise<void> {
  const action = args[0]
  if (!ACTIONS.includes(action)) throw new UsageError(`versions takes ${ACTIONS.slice(0, -1).join(', ')} or notify. Run "orgscan versions --help".`)
  const { values, positionals } = parse(
    args.slice(1),
    { surface: { type: 'string' }, sunset: { type: 'string' }, 'retry-unconfirmed': { type: 'boolean' } },
    action === 'list' ? 0 : 1,
  )
  const surface = values.surface === undefined ? undefined : String(values.surface)
  if (surface !== undefined && surface !== 'rest' && surface !== 'mcp') throw new UsageError('--surface takes rest or mcp.')
  const json = !!values.json
  const name = positionals[0]
  if (action !== 'list' && !name) throw new UsageError(`versions ${action} needs the VERSION (v1, v2, …).`)
  if (name !== undefined && !/^v[1-9][0-9]{0,3}$/.test(name)) throw new UsageError(`A version is named v1, v2, …; got "${name}".`)
  const sunset = values.sunset === undefined ? undefined : String(values.sunset)
  if (sunset !== undefined && action !== 'add' && action !== 'deprecate') throw new UsageError(`--sunset belongs to versions deprecate and versions add, not versions ${action}.`)
  if (values['retry-unconfirmed'] && action !== 'notify') throw new UsageError('--retry-unconfirmed belongs to versions notify.')

  if (action === 'list') {
    const rows = (await session((call) => call('versions.list', { surface }))) as ListedVersion[]
    return print(json, rows, () => versionTable(rows, true))
  }
  if (action === 'notify') {
    if (!config.mail) throw new ConfigError('versions notify sends e-mail: set SMTP_URL and SMTP_FROM (see README, "Configuration").')
    const mailer = await createMailer(config.mail)
    try {
      const report = await session((call) => notifyCallers({ call, mailer, surface: surface as 'rest' | 'mcp' | undefined, name, retry: values['retry-unconfirmed'] === true, docsUrl: config.docsUrl, progress: io.err }))
      print(json, report, () => reportText(report))
      if (report.failed.length) throw new AdminError(`${report.failed.length} notice${report.failed.length === 1 ? ' was' : 's were'} not sent (see above).`)
      return
    } finally {
      mailer.close()
    }
  }
  if (action === 'deprecate' && sunset === undefined) throw new UsageError('versions deprecate needs --sunset YYYY-MM-DD (at least 3 months away).')
  const rows = (await session((call) => call(`versions.${action}`, { surface, name, ...(sunset !== undefined ? { sunsetDate: sunset } : {}) }))) as ListedVersion[]
  const changed = rows.filter((r) => r.name === name || action === 'add')
  const verb = action === 'add' ? 'released' : action === 'deprecate' ? 'deprecated' : 'removed'
  print(json, rows, () => `${verb} ${[...new Set(changed.filter((r) => r.name === name).map((r) => `${SURFACE_NAME[r.surface]} ${r.name}`))].join(' and ')}; every running process follows within seconds.\n${versionTable(rows, false)}`)
}

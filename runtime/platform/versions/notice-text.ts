/** The e-mail of a deprecation notice: which versions, their sunset dates, what the recipient's credentials called. */
import type { Call, Notice } from './notices.ts'
import { sunsetMs } from '../../core/version-state.ts'

const PRODUCT: Record<Notice['surface'], string> = { rest: 'the orgscan REST API', mcp: 'the orgscan MCP server' }
const SHORT: Record<Notice['surface'], string> = { rest: 'REST API', mcp: 'MCP server' }

export interface NoticeMessage {
  subject: string
  text: string
}

function caller(c: Call): string {
  const when = `last call ${c.lastCalledAt.slice(0, 10)}`
  if (c.kind === 'key') return `API key ${c.keyId}${c.keyName ? ` ("${c.keyName}")` : ''} of account ${c.accountName}${c.userEmail ? `, belonging to ${c.userEmail}` : ''}: ${when}`
  return `${c.userEmail} signed in with OAuth (account ${c.accountName}): ${when}`
}

function list(items: string[]): string {
  return items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`
}

/** The notice of `notices` for one recipient, listing `calls` (theirs, of those versions). */
export function noticeMessage(name: string, notices: readonly Notice[], calls: readonly Call[], docsUrl: string | undefined): NoticeMessage {
  const what = list(notices.map((n) => `${SHORT[n.surface]} ${n.version}`))
  const dates = list([...new Set(notices.map((n) => n.sunsetDate))].sort())
  const subject = `Deprecation notice: orgscan ${what} ${notices.length === 1 ? 'stops' : 'stop'} answering on ${dates}`
  const lines = [`Hello${name ? ` ${name}` : ''},`, '']
  for (const n of notices) {
    lines.push(`Version ${n.version} of ${PRODUCT[n.surface]} is deprecated. From ${n.sunsetDate} (00:00 UTC) it answers every request with 410 Gone.`)
    lines.push(
      n.surface === 'rest'
        ? `Until then its responses carry the headers "Deprecation: true" and "Sunset: ${new Date(sunsetMs(n.sunsetDate)).toUTCString()}".`
        : 'Until then its server_info tool reports it as deprecated, with this sunsetDate.',
    )
    lines.push('', `In the last 90 days it was called with:`)
    for (const c of calls.filter((x) => x.surface === n.surface && x.version === n.version)) lines.push(`  - ${caller(c)}`)
    lines.push('')
  }
  lines.push(`How to move to the current version: ${docsUrl ? `${docsUrl}/versioning.md` : 'docs/versioning.md in the orgscan documentation'}.`, '')
  lines.push('You receive this notice once, as the owner of these credentials.', '-- orgscan')
  return { subject, text: lines.join('\n') + '\n' }
}

/**
 * Deprecation notices (`orgscan versions notify`): who is owed one, and the record that makes re-running safe.
 *
 * The owner of a call: an OAuth user, or the user an API key belongs to, is reached at the user's e-mail; an API key of
 * the account itself at the account's contact e-mail (`orgscan accounts update ID --email E`). An owner without an
 * address is reported, not skipped silently. Each owner gets one e-mail per notice, a notice being a version's
 * deprecation with its sunset date (a postponed date is a new notice).
 *
 * Sending safely: a notice is claimed for a recipient (`sending`) before the e-mail is handed to the SMTP server and
 * marked `sent` once the server accepted it; a refusal by the server releases the claim (a later run retries). A run
 * interrupted between the two leaves `sending`: re-runs do not resend it (at most once) unless asked to
 * (`retry`), and report it.
 */
import type postgres from 'postgres'
import type { Surface } from '../../core/plan.ts'
import { USAGE_DAYS } from './usage.ts'
import type { VersionRow } from '../../core/version-state.ts'

export interface Notice {
  surface: Surface
  version: string
  sunsetDate: string
}

/** One recorded caller of a version. */
export interface Call {
  surface: Surface
  version: string
  kind: 'key' | 'user'
  keyId: string | null
  keyName: string | null
  userEmail: string | null
  accountId: string
  accountName: string
  lastCalledAt: string
}

export interface Recipient {
  /** Lower-case address. */
  address: string
  /** For the greeting: the user's name, or the account's. */
  name: string
  calls: Call[]
  /** Notices not yet claimed for this address. */
  owed: Notice[]
  /** Claimed by a run that did not confirm the send (interrupted). */
  unconfirmed: Notice[]
  alreadySent: Notice[]
}

export interface NoticePlan {
  notices: Notice[]
  recipients: Recipient[]
  /** Owners with no address: an account without a contact e-mail, with the calls of its keys. */
  withoutAddress: Array<{ accountId: string; accountName: string; calls: Call[] }>
}

const sameNotice = (a: Notice, b: { surface: string; version: string; sunsetDate: string }) => a.surface === b.surface && a.version === b.version && a.sunsetDate === b.sunsetDate

function columns(notices: readonly Notice[]) {
  return { s: notices.map((n) => n.surface), v: notices.map((n) => n.version), d: notices.map((n) => n.sunsetDate) }
}

/** Everyone owed a notice about `targets` (deprecated versions), and what was already sent. */
export async function planNotices(sql: postgres.Sql, targets: readonly VersionRow[], now: number): Promise<NoticePlan> {
  const notices: Notice[] = targets.map((t) => ({ surface: t.surface, version: t.name, sunsetDate: t.sunsetDate! }))
  const c = columns(notices)
  const rows = await sql<Array<{ surface: Surface; version: string; key_id: string | null; key_name: string | null; user_id: string | null; user_email: string | null; user_name: string | null; account_id: string; account_name: string; contact_email: string | null; last_called_at: Date }>>`
    SELECT c.surface, c.version, c.key_id, k.name AS key_name, c.user_id::text AS user_id, u.email AS user_email, u.name AS user_name,
      c.account_id::text AS account_id, a.name AS account_name, a.contact_email, c.last_called_at
    FROM version_callers c
    JOIN accounts a ON a.id = c.account_id
    LEFT JOIN api_keys k ON k.key_id = c.key_id
    LEFT JOIN users u ON u.id = c.user_id
    WHERE c.last_called_at >= ${new Date(now - USAGE_DAYS * 86_400_000)}
      AND (c.surface, c.version) IN (SELECT x.s, x.v FROM unnest(${c.s}::text[], ${c.v}::text[]) AS x(s, v))
    ORDER BY c.account_id, c.key_id NULLS LAST, c.user_id, c.surface, c.version`
  const recorded = await sql<Array<{ surface: Surface; version: string; sunset_date: string; recipient: string; state: 'sending' | 'sent' }>>`
    SELECT surface, version, sunset_date::text AS sunset_date, recipient, state FROM version_notices
    WHERE (surface, version, sunset_date) IN (SELECT x.s, x.v, x.d::date FROM unnest(${c.s}::text[], ${c.v}::text[], ${c.d}::text[]) AS x(s, v, d))`
  const byAddress = new Map<string, Recipient>()
  const orphans = new Map<string, NoticePlan['withoutAddress'][number]>()
  for (const r of rows) {
    const call: Call = {
      surface: r.surface, version: r.version, kind: r.key_id ? 'key' : 'user', keyId: r.key_id, keyName: r.key_name,
      userEmail: r.user_email, accountId: r.account_id, accountName: r.account_name, lastCalledAt: r.last_called_at.toISOString(),
    }
    const address = (r.user_id ? r.user_email : r.contact_email)?.toLowerCase()
    if (!address) {
      const o = orphans.get(r.account_id) ?? { accountId: r.account_id, accountName: r.account_name, calls: [] }
      o.calls.push(call)
      orphans.set(r.account_id, o)
      continue
    }
    const rec = byAddress.get(address) ?? { address, name: (r.user_id ? r.user_name : r.account_name) ?? '', calls: [], owed: [], unconfirmed: [], alreadySent: [] }
    rec.calls.push(call)
    byAddress.set(address, rec)
  }
  for (const rec of byAddress.values()) {
    for (const n of notices) {
      if (!rec.calls.some((x) => x.surface === n.surface && x.version === n.version)) continue
      const done = recorded.find((x) => x.recipient === rec.address && sameNotice(n, { ...x, sunsetDate: x.sunset_date }))
      if (!done) rec.owed.push(n)
      else if (done.state === 'sent') rec.alreadySent.push(n)
      else rec.unconfirmed.push(n)
    }
  }
  return { notices, recipients: [...byAddress.values()], withoutAddress: [...orphans.values()] }
}

/**
 * Claims `notices` for `recipient`; returns those this call claimed (a concurrent run, or an earlier one, holds the
 * rest). With `retry`, notices left `sending` by an interrupted run are claimed again.
 */
export async function claimNotices(sql: postgres.Sql, recipient: string, notices: readonly Notice[], retry: boolean): Promise<Notice[]> {
  const c = columns(notices)
  // Re-claims first, so the claims inserted just after are not taken for interrupted ones.
  const again = retry
    ? await sql<Array<{ surface: Surface; version: string; sunset_date: string }>>`
        UPDATE version_notices SET claimed_at = now() WHERE recipient = ${recipient} AND state = 'sending'
          AND (surface, version, sunset_date) IN (SELECT x.s, x.v, x.d::date FROM unnest(${c.s}::text[], ${c.v}::text[], ${c.d}::text[]) AS x(s, v, d))
        RETURNING surface, version, sunset_date::text AS sunset_date`
    : []
  const fresh = await sql<Array<{ surface: Surface; version: string; sunset_date: string }>>`
    INSERT INTO version_notices (surface, version, sunset_date, recipient, state, claimed_at)
    SELECT x.s, x.v, x.d::date, ${recipient}, 'sending', now() FROM unnest(${c.s}::text[], ${c.v}::text[], ${c.d}::text[]) AS x(s, v, d)
    ON CONFLICT DO NOTHING RETURNING surface, version, sunset_date::text AS sunset_date`
  return [...fresh, ...again].map((r) => ({ surface: r.surface, version: r.version, sunsetDate: r.sunset_date }))
}

/** The SMTP server accepted the e-mail: the notices are sent. */
export async function confirmNotices(sql: postgres.Sql, recipient: string, notices: readonly Notice[], messageId: string | null): Promise<void> {
  const c = columns(notices)
  await sql`UPDATE version_notices SET state = 'sent', sent_at = now(), message_id = ${messageId}
    WHERE recipient = ${recipient} AND (surface, version, sunset_date) IN (SELECT x.s, x.v, x.d::date FROM unnest(${c.s}::text[], ${c.v}::text[], ${c.d}::text[]) AS x(s, v, d))`
}

/** The SMTP server refused the e-mail (nothing was sent): a later run tries again. */
export async function releaseNotices(sql: postgres.Sql, recipient: string, notices: readonly Notice[]): Promise<void> {
  const c = columns(notices)
  await sql`DELETE FROM version_notices WHERE recipient = ${recipient} AND state = 'sending'
    AND (surface, version, sunset_date) IN (SELECT x.s, x.v, x.d::date FROM unnest(${c.s}::text[], ${c.v}::text[], ${c.d}::text[]) AS x(s, v, d))`
}

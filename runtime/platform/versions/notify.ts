/**
 * `orgscan versions notify`: sends each owner of a recorded call one e-mail per deprecation notice, idempotently
 * (runtime/platform/versions/notices.ts). The database work goes through `call` — on the database itself, or through the
 * admin socket of the server that holds the embedded database — and the e-mail through the SMTP server of the
 * command's own configuration.
 */
import type { Surface } from '../../core/plan.ts'
import { MailError, type Mailer } from './mailer.ts'
import type { Notice, NoticePlan, Recipient } from './notices.ts'
import { noticeMessage } from './notice-text.ts'

export type AdminCall = (op: string, args: Record<string, unknown>) => Promise<unknown>

export interface NotifyReport {
  notices: Notice[]
  sent: Array<{ to: string; notices: Notice[] }>
  alreadySent: Array<{ to: string; notices: Notice[] }>
  /** Claimed by an earlier run that did not confirm the send: not resent without --retry-unconfirmed. */
  unconfirmed: Array<{ to: string; notices: Notice[] }>
  failed: Array<{ to: string; error: string; unconfirmed: boolean }>
  withoutAddress: NoticePlan['withoutAddress']
}

export interface NotifyOptions {
  call: AdminCall
  mailer: Mailer
  surface?: Surface
  name: string
  retry: boolean
  docsUrl?: string
  progress(line: string): void
}

/** A progress line every this many recipients (and at the end). */
const PROGRESS_EVERY = 25

export async function notifyCallers(o: NotifyOptions): Promise<NotifyReport> {
  const plan = (await o.call('versions.recipients', { surface: o.surface, name: o.name })) as NoticePlan
  const report: NotifyReport = { notices: plan.notices, sent: [], alreadySent: [], unconfirmed: [], failed: [], withoutAddress: plan.withoutAddress }
  const total = plan.recipients.length
  o.progress(`notify: ${total} recipient${total === 1 ? '' : 's'} with an address, ${plan.withoutAddress.length} account${plan.withoutAddress.length === 1 ? '' : 's'} without one`)
  let done = 0
  const tick = () => {
    done++
    if (done % PROGRESS_EVERY === 0 || done === total) o.progress(`notify: ${done}/${total} (${report.sent.length} sent, ${report.failed.length} failed)`)
  }
  for (const r of plan.recipients) {
    const fatal = await one(o, r, report)
    tick()
    if (fatal) {
      o.progress(`notify: stopped: ${fatal}`)
      break
    }
  }
  return report
}

/** Notifies one recipient; returns a message when no later e-mail can be sent either. */
async function one(o: NotifyOptions, r: Recipient, report: NotifyReport): Promise<string | undefined> {
  const owed = o.retry ? [...r.owed, ...r.unconfirmed] : r.owed
  if (owed.length === 0) {
    if (r.unconfirmed.length) report.unconfirmed.push({ to: r.address, notices: r.unconfirmed })
    else report.alreadySent.push({ to: r.address, notices: r.alreadySent })
    return undefined
  }
  if (!o.retry && r.unconfirmed.length) report.unconfirmed.push({ to: r.address, notices: r.unconfirmed })
  const notices = (await o.call('versions.claim', { recipient: r.address, notices: owed, retry: o.retry })) as Notice[]
  if (notices.length === 0) {
    report.alreadySent.push({ to: r.address, notices: owed })
    return undefined
  }
  const calls = r.calls.filter((c) => notices.some((n) => n.surface === c.surface && n.version === c.version))
  const message = noticeMessage(r.name, notices, calls, o.docsUrl)
  try {
    const { messageId } = await o.mailer.send({ to: r.address, ...message })
    await o.call('versions.sent', { recipient: r.address, notices, messageId })
    report.sent.push({ to: r.address, notices })
    return undefined
  } catch (e) {
    if (!(e instanceof MailError)) throw e
    if (e.notSent) await o.call('versions.release', { recipient: r.address, notices })
    report.failed.push({ to: r.address, error: e.message, unconfirmed: !e.notSent })
    return e.fatal ? e.message : undefined
  }
}

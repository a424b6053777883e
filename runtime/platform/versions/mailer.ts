/**
 * Sending e-mail through the configured SMTP server (SMTP_URL, SMTP_FROM) with nodemailer, one connection reused
 * for a run. `send` tells a refusal (nothing was delivered: the caller may retry later) from an outcome it cannot
 * know (the connection broke mid-message: the e-mail may have gone out).
 */
import type { MailConfig } from '../../core/config-types.ts'

export interface Mailer {
  send(m: { to: string; subject: string; text: string }): Promise<{ messageId: string | null }>
  close(): void
}

export class MailError extends Error {
  constructor(
    message: string,
    /** True when the SMTP server was not reached or refused the message: it was certainly not sent. */
    readonly notSent: boolean,
    /** True when no later message can go either (server unreachable, login refused). */
    readonly fatal: boolean,
  ) {
    super(message)
    this.name = 'MailError'
  }
}

/** Errors raised before any message was transmitted. */
const BEFORE_SENDING = new Set(['ECONNECTION', 'EDNS', 'EAUTH', 'ETLS', 'ENOAUTH', 'EENVELOPE'])
const FATAL = new Set(['ECONNECTION', 'EDNS', 'EAUTH', 'ETLS', 'ENOAUTH'])

/**
 * nodemailer is loaded by the command that sends (`orgscan versions notify`), not by every process that could: the
 * command is one module, and a served process would otherwise carry its 4 MB of heap
 * (docs/adr/0020-compiled-ascii-bundle.md).
 */
export async function createMailer(config: MailConfig): Promise<Mailer> {
  const { default: nodemailer } = await import('nodemailer')
  const transport = nodemailer.createTransport(config.url, { from: config.from })
  return {
    async send(m) {
      let info
      try {
        info = await transport.sendMail({ from: config.from, to: m.to, subject: m.subject, text: m.text })
      } catch (e) {
        const err = e as { code?: string; responseCode?: number; message?: string }
        const code = err.code ?? ''
        // The server's own refusal of this message (a 4xx/5xx answer) also means it was not taken.
        const notSent = BEFORE_SENDING.has(code) || (err.responseCode !== undefined && code === 'EMESSAGE')
        throw new MailError(`${code ? `${code}: ` : ''}${(err.message ?? 'sending failed').split('\n')[0]}`, notSent, FATAL.has(code))
      }
      if (info.rejected.length > 0) throw new MailError(`the SMTP server refused the recipient ${m.to}`, true, false)
      return { messageId: info.messageId ?? null }
    },
    close() {
      transport.close()
    },
  }
}

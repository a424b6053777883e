/**
 * The version table of a serving process: read from the database at start and kept in memory, so the version
 * check of a request costs no database round trip. Every change (`orgscan versions`, in any process) fires
 * migration 007's trigger, delivered on `orgscan_versions` when its transaction commits; the process re-reads the
 * table then. As a bound when a notification is lost (the listening connection dropped unnoticed), it also re-reads
 * every `refreshMs` on PostgreSQL. On the embedded database every change is made in the serving process (its admin
 * socket), which re-reads at once (`reload`).
 */
import type postgres from 'postgres'
import type { Logger } from '../../core/log.ts'
import type { Surface } from '../../core/plan.ts'
import { LimitListener } from '../quota/limit-listener.ts'
import type { VersionRow, VersionSource } from '../../core/version-state.ts'
import { readVersions } from './store.ts'

export const VERSIONS_CHANNEL = 'orgscan_versions'

/** How often a process on PostgreSQL re-reads the table without being told (the bound on a lost notification). */
export const VERSIONS_REFRESH_MS = 5000

export class LiveVersions implements VersionSource {
  private bySurface: Record<Surface, readonly VersionRow[]> = { rest: [], mcp: [] }
  private listener: LimitListener | undefined
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private again = false
  private closed = false

  private constructor(
    private readonly sql: postgres.Sql,
    private readonly log: Logger,
  ) {}

  /** Reads the table; on PostgreSQL (`listen`), listens for changes and re-reads every `refreshMs`. */
  static async start(sql: postgres.Sql, log: Logger, opts: { listen: boolean; refreshMs?: number }): Promise<LiveVersions> {
    const live = new LiveVersions(sql, log)
    await live.load()
    if (opts.listen) {
      live.listener = new LimitListener(sql, log, () => void live.reload(), VERSIONS_CHANNEL, `versions: LISTEN failed; changes apply within ${opts.refreshMs ?? VERSIONS_REFRESH_MS} ms`)
      live.timer = setInterval(() => void live.reload(), opts.refreshMs ?? VERSIONS_REFRESH_MS)
      live.timer.unref()
    }
    return live
  }

  rows(surface: Surface): readonly VersionRow[] {
    return this.bySurface[surface]
  }

  /**
   * Re-reads the table. Calls during a read are folded into one more read after it, so the copy is never older than
   * the last change announced before the call. A failed read keeps the copy in use (and is logged).
   */
  reload(): Promise<void> {
    if (this.closed) return Promise.resolve()
    if (this.running) {
      this.again = true
      return this.running
    }
    this.running = (async () => {
      do {
        this.again = false
        await this.load().catch((err: unknown) => this.log.warn({ msg: 'versions: re-reading the version table failed; the copy in use stays', err }))
      } while (this.again && !this.closed)
    })().finally(() => (this.running = undefined))
    return this.running
  }

  private async load(): Promise<void> {
    const rows = await readVersions(this.sql)
    this.bySurface = { rest: rows.filter((r) => r.surface === 'rest'), mcp: rows.filter((r) => r.surface === 'mcp') }
  }

  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearInterval(this.timer)
    await this.listener?.close()
    await this.running
  }
}

/** The `orgscan` command's help texts and its plain-text tables. */
export const HELP: Record<string, string> = {
  '': `orgscan — Organization Scan Data Service

Usage: orgscan <command> [options]

Commands:
  serve [--port N]                         start the service (embedded database unless DATABASE_URL is set)
  migrate                                  apply database migrations
  seed [--scale X]                         fill deterministic demo data (scale 1 = one large org with 20,000+ fields)
  import --account ID FILE                 import one scan bundle (JSON) for an org of the account
  accounts create --name N [--daily-limit N --monthly-limit N]
  accounts list
  accounts update ID [--name N --daily-limit N --monthly-limit N]
  keys create --account ID [--name N]      create an API key; the secret is printed once
  keys list --account ID
  keys revoke KEYID

Every command accepts --json (machine-readable output) and --help. While a server runs on the embedded database,
accounts, keys and import are carried out by that server; seed and migrate need it stopped.
Environment: DATABASE_URL, ORGSCAN_DATA_DIR (default ./data), PORT, ORGSCAN_PEPPER, … (see README).`,
  serve: 'Usage: orgscan serve [--port N] [--json]\nStarts the service; seeds demo data on the first start of an empty embedded database.',
  migrate: 'Usage: orgscan migrate [--json]\nApplies pending migrations.',
  seed: 'Usage: orgscan seed [--scale X] [--json]\nFills deterministic demo data (accounts, orgs, scans). --scale between 0 and 10, default 1.',
  import: 'Usage: orgscan import --account ID FILE [--json]\nImports one scan bundle ({org, scan, data}) in one transaction.',
  accounts: 'Usage:\n  orgscan accounts create --name N [--daily-limit N] [--monthly-limit N] [--json]\n  orgscan accounts list [--json]\n  orgscan accounts update ID [--name N] [--daily-limit N] [--monthly-limit N] [--json]',
  keys: 'Usage:\n  orgscan keys create --account ID [--name N] [--json]\n  orgscan keys list --account ID [--json]\n  orgscan keys revoke KEYID [--json]',
}

export function table(rows: Array<Record<string, unknown>>, cols: string[]): string {
  if (rows.length === 0) return '(none)'
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v))
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd()
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n')
}

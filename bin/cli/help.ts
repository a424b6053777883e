/** The `orgscan` command's help texts and its plain-text tables. */
export const HELP: Record<string, string> = {
  '': `orgscan — Organization Scan Data Service

Usage: orgscan <command> [options]

Commands:
  serve [--port N] [--workers N]           start the service (embedded database unless DATABASE_URL is set)
  migrate                                  apply database migrations
  seed [--scale X]                         fill deterministic demo data (scale 1 = one large org with 20,000+ fields)
  import --account ID FILE [--again]       import one scan bundle (JSON or NDJSON) for an org of the account
  export --org ID [--scan ID] [--format json|ndjson] [--out FILE]
                                           write the org's latest completed scan (or scan ID) as a bundle import reads
  docs [--out DIR]                         write the generated references (OpenAPI, REST, MCP, errors) and client types
  scaffold resource NAME                   a new resource: its declaration, registry entry and migration (then npm run regen)
  accounts create --name N [--daily-limit N --monthly-limit N --email E]
  accounts list
  accounts update ID [--name N --daily-limit N --monthly-limit N --enhanced-mcp-security on|off --email-domain D --email E]
  keys create --account ID [--name N]      create an API key; the secret is printed once
  keys list --account ID
  keys revoke KEYID
  users create --account ID --email E [--name N --admin --password-stdin]
                                           a user who signs in; prints a one-time password unless given on stdin
  users list --account ID | grant USER --org ORGID | revoke-org USER --org ORGID | revoke-tokens USER
  clients create --account ID --name N --redirect-uri U… --scope S… [--token-exchange]
                                           an OAuth client for the account; the secret is printed once
  clients list --account ID | update CLIENT [--name N --redirect-uri U… --scope S…] | revoke CLIENT
  versions list [--surface rest|mcp]       the version table of REST and MCP: status, sunset date, recent callers
  versions deprecate V --sunset YYYY-MM-DD | sunset V | add V [--sunset YYYY-MM-DD]   [--surface rest|mcp]
  versions notify V [--surface rest|mcp] [--retry-unconfirmed]
                                           e-mail the owners of keys and users that called V (SMTP_URL, SMTP_FROM)
  pepper export [--out FILE] [--delete]    move a pepper an older orgscan stored in the database out of it

Every command accepts --json (machine-readable output; errors too, as JSON on stderr) and --help; orgscan --version. While a server runs on the embedded database,
accounts, keys, users, clients, versions, import and export are carried out by that server; seed and migrate need it stopped.
Environment: DATABASE_URL, ORGSCAN_DATA_DIR (default ./data), PORT, ORGSCAN_PEPPER or ORGSCAN_PEPPER_FILE (needed with
DATABASE_URL by serve, keys create and clients create; openssl rand -base64 48 makes one), … (see README).`,
  serve:
    'Usage: orgscan serve [--port N] [--workers N] [--json]\nStarts the service; seeds demo data on the first start of an empty embedded database.\n' +
    '--workers N (ORGSCAN_WORKERS; default 1): N processes sharing the port, restarted when they die (needs DATABASE_URL).',
  migrate: 'Usage: orgscan migrate [--json]\nApplies pending migrations.',
  scaffold:
    'Usage: orgscan scaffold resource NAME [--json]\nWrites resources/<name>.ts (a typed declaration to edit), adds it to resources/index.ts and writes its\n' +
    'migration (the DDL the declaration expects). NAME is camelCase and plural, e.g. validationRules. Then run npm run regen.',
  seed: 'Usage: orgscan seed [--scale X] [--json]\nFills deterministic demo data (accounts, orgs, scans). --scale between 0 and 10, default 1.',
  docs: 'Usage: orgscan docs [--out DIR] [--json]\nWrites docs/openapi.json, docs/reference/{rest,mcp,errors}.md, client/generated.ts and client/package.json from the registry (default: into this installation).',
  import:
    'Usage: orgscan import --account ID FILE [--again] [--json]\nImports one scan bundle in one transaction: JSON ({org, scan, data}) or NDJSON (a header line, one line per\n' +
    'record, an end line; read line by line). Nothing is written when anything is invalid: every problem is named with\n' +
    'its place (a JSON pointer, and the line in NDJSON), the first 100 listed and the rest counted (with --json, as "problems").\n' +
    'Values the service computes (an org or records pasted from the API: lastScanDate, orgLimits.used, …) are ignored, with a note.\n' +
    'A scan the org already has (the same startedAt and status) is not imported twice: nothing is written and the command\n' +
    'names the scan (exit 0, "alreadyImported": true with --json), so a retried import is safe; --again imports it anyway.\n' +
    'Progress on stderr: a bar on a terminal, a line per resource otherwise (with --json: JSON lines).',
  export:
    'Usage: orgscan export --org ID [--scan ID] [--format json|ndjson] [--out FILE] [--json]\n' +
    'Writes a scan of the org as a bundle that orgscan import reads, in constant memory: its latest completed scan, or --scan ID.\n' +
    '--format: json (default) or ndjson (default when FILE ends in .ndjson or .jsonl; use it for large orgs).\n' +
    'Without --out the bundle goes to stdout and the result line to stderr. Progress on stderr.',
  accounts:
    'Usage:\n  orgscan accounts create --name N [--daily-limit N] [--monthly-limit N] [--email E] [--json]\n  orgscan accounts list [--json]\n' +
    '  orgscan accounts update ID [--name N] [--daily-limit N] [--monthly-limit N] [--enhanced-mcp-security on|off] [--email-domain D] [--email E] [--json]\n' +
    'Enhanced MCP Security: only OAuth clients issued for the account (orgscan clients create) may use MCP; API keys may not.\n' +
    '--email-domain: users of the upstream identity provider with a verified e-mail in D join this account on first sign-in.\n' +
    '--email: the account\'s contact address, where deprecation notices about its own API keys go (--email "" removes it).',
  users:
    'Usage:\n  orgscan users create --account ID --email E [--name N] [--admin] [--password-stdin] [--json]\n  orgscan users list --account ID [--json]\n' +
    '  orgscan users grant USER --org ORGID [--json]\n  orgscan users revoke-org USER --org ORGID [--json]\n  orgscan users revoke-tokens USER [--json]\n' +
    'A user signs in (OAuth) and sees only the orgs granted to it, none until one is granted (users grant). Without\n' +
    '--password-stdin a one-time password is printed. revoke-org of an org the user was not granted changes nothing and\n' +
    'says so (exit 0; with --json, "alreadyRevoked": true).',
  clients:
    'Usage:\n  orgscan clients create --account ID --name N --redirect-uri U [--redirect-uri U…] --scope mcp:read [--scope mcp:write] [--token-exchange] [--json]\n' +
    '  orgscan clients list --account ID [--json]\n  orgscan clients update CLIENT [--name N] [--redirect-uri U…] [--scope S…] [--json]\n  orgscan clients revoke CLIENT [--json]\n' +
    'A localhost or 127.0.0.1 redirect URI accepts any port. The client secret is printed once. Revoking a revoked client\n' +
    'changes nothing and says when it was revoked (exit 0; with --json, "alreadyRevoked": true).',
  versions:
    'Usage:\n  orgscan versions list [--surface rest|mcp] [--json]\n' +
    '  orgscan versions deprecate VERSION --sunset YYYY-MM-DD [--surface rest|mcp] [--json]\n' +
    '  orgscan versions sunset VERSION [--surface rest|mcp] [--json]\n' +
    '  orgscan versions add VERSION [--sunset YYYY-MM-DD] [--surface rest|mcp] [--json]\n' +
    '  orgscan versions notify VERSION [--surface rest|mcp] [--retry-unconfirmed] [--json]\n' +
    'REST and MCP keep independent version tables; without --surface a change applies to both (all or nothing).\n' +
    'deprecate: Deprecation and Sunset headers (REST) and the status in server_info and GET / from now on, 410 Gone from the\n' +
    '  sunset date (00:00 UTC), which must be at least 3 months away (a running window may always be lengthened).\n' +
    'sunset: removes a deprecated version now (410). add: releases the next major this build serves; the current one is\n' +
    '  deprecated with --sunset; refused while it would leave more than two supported majors (sunset the oldest first).\n' +
    'notify: one e-mail to each owner of an API key or OAuth user that called VERSION in the last 90 days (a user\'s own\n' +
    '  address; the account contact e-mail for the account\'s keys), sent once: a re-run sends only what was not sent.\n' +
    'Changes apply to every running process within seconds (docs/versioning.md).',
  pepper:
    'Usage: orgscan pepper export [--out FILE] [--delete] [--json]\n' +
    'An older orgscan kept a generated pepper in the database (server_settings); it is no longer read from there, and a\n' +
    'server on that database refuses to start until it is moved out. export prints it (or writes it to FILE, mode 0600,\n' +
    'never over an existing file); --delete (or "y" at the question on a terminal) then deletes it from the database.\n' +
    'Give it to every process with ORGSCAN_PEPPER_FILE=FILE or ORGSCAN_PEPPER; a start with the same pepper configured\n' +
    'deletes the stored copy too. See docs/operating.md "The pepper".',
  keys:
    'Usage:\n  orgscan keys create --account ID [--name N] [--json]\n  orgscan keys list --account ID [--json]\n  orgscan keys revoke KEYID [--json]\n' +
    'Revoking a revoked key changes nothing and says when it was revoked (exit 0; with --json, "alreadyRevoked": true).',
}

/**
 * The help a command line asks for — `orgscan`, `--help`, `-h`, `help`, or a command with --help or -h — or undefined.
 * bin/orgscan.js answers it from this module's own small bundle, without loading the rest of the command.
 */
export function helpFor(argv: string[]): string | undefined {
  const [cmd = '', ...args] = argv
  if (cmd === '' || cmd === '--help' || cmd === '-h' || cmd === 'help') return HELP['']
  if (Object.hasOwn(HELP, cmd) && (args.includes('--help') || args.includes('-h'))) return HELP[cmd]
  return undefined
}

export function table(rows: Array<Record<string, unknown>>, cols: string[]): string {
  if (rows.length === 0) return '(none)'
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : Array.isArray(v) ? v.join(',') : String(v))
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)))
  const line = (vals: string[]) => vals.map((v, i) => v.padEnd(widths[i])).join('  ').trimEnd()
  return [line(cols), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n')
}

#!/usr/bin/env -S node --max-semi-space-size=8
// The `orgscan` command. The code is TypeScript, loaded through tsx. A young generation of at most 8 MB keeps a
// busy server about 30 MB smaller at no cost in throughput (docs/decisions.md "Memory"); `npm start` passes it too.
import { register } from 'tsx/esm/api'

register()
await import('./cli/main.ts')

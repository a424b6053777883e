#!/usr/bin/env node
// The `orgscan` command. The code is TypeScript, loaded through tsx.
import { register } from 'tsx/esm/api'

register()
await import('./cli/main.ts')

/**
 * The log of a database that blinks (runtime/core/log.ts, docs/adr/0110-database-errors.md): identical warnings and errors
 * are written at most once per REPEAT_MS, and the next line written for them counts the ones left out; a failure of
 * another kind is written at once; an unreachable database's error has no stack, any other error keeps its stack.
 */
import { t } from '../helpers/file-test.ts'
import { createLogger, REPEAT_MS } from '../../runtime/core/log.ts'

const closed = () => Object.assign(new Error('write CONNECTION_CLOSED 127.0.0.1:5432'), { code: 'CONNECTION_CLOSED' })

t.test('identical failures: one line per REPEAT_MS, then how many were left out', async (t) => {
  const lines: Array<Record<string, any>> = []
  let now = 1_000_000
  const log = createLogger((s) => lines.push(JSON.parse(s)), false, () => now)
  for (let i = 0; i < 50; i++) log.error({ msg: 'read failed', err: closed() })
  t.equal(lines.length, 1, '50 identical failures within the interval: one line')
  t.equal(lines[0].repeated, undefined)
  log.error({ msg: 'read failed', err: Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }) })
  log.error({ msg: 'quota: state read failed', err: closed() })
  log.warn({ msg: 'read failed', err: closed() })
  t.equal(lines.length, 4, 'another error, another message or another level: written at once')
  now += REPEAT_MS
  log.error({ msg: 'read failed', err: closed() })
  t.equal(lines.length, 5)
  t.equal(lines[4].repeated, 49, 'the next line counts the ones left out')
  log.info({ msg: 'request' })
  log.info({ msg: 'request' })
  t.equal(lines.length, 7, 'info lines are never held back')
})

t.test('an unreachable database has no stack in the log; any other error keeps it', async (t) => {
  const lines: Array<Record<string, any>> = []
  const log = createLogger((s) => lines.push(JSON.parse(s)))
  log.error({ msg: 'read failed', err: closed() })
  log.error({ msg: 'read failed', err: new TypeError('a bug') })
  t.same(lines[0].err, { name: 'Error', message: 'write CONNECTION_CLOSED 127.0.0.1:5432', code: 'CONNECTION_CLOSED' })
  t.match(lines[1].err, { name: 'TypeError', message: 'a bug', stack: /TypeError: a bug\n\s+at / })
})

/**
 * Stopping under keep-alive load loses no request (docs/operating.md "Health, request ids and stopping"), one listener:
 * a served process gets SIGTERM while 16 keep-alive connections send requests back to back and a few others wait
 * (test/helpers/drain-load.ts). Every request written before the listener closed is answered (a 200; never a reset),
 * every answer to a request written after the drain began says `Connection: close`, and only new connections are
 * refused. Five runs: the race this guards against (a request reaching an idle connection just as the drain closes it)
 * shows in some runs only. The separate MCP listener, HTTPS and `--workers 2`: drain-listeners.test.ts.
 */
import { t } from './helpers/file-test.ts'
import { assertRuns, CONNECTIONS, onListener, run, serverEnv, type Run } from './helpers/drain-load.ts'

const RUNS = 5

t.test(`SIGTERM under ${CONNECTIONS} keep-alive connections loses no request (${RUNS} runs, one listener)`, async (t) => {
  const env = await serverEnv(t)
  const results: Run[] = []
  for (let i = 0; i < RUNS; i++) results.push(await run(env, ({ url, auth }) => onListener(url, auth)))
  assertRuns(t, results)
})

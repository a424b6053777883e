/**
 * Reading raw HTTP/1.1 answers, for what fetch cannot do: pipelined requests, bytes that are not HTTP, a client that
 * stops reading. Answers are framed by Content-Length (every answer of the service has one).
 */
export interface RawAnswer {
  status: number
  body: string
}

/** Splits the complete answers off the front of a response stream; `rest` is what does not make a whole answer yet. */
export function splitAnswers(stream: Buffer): { answers: RawAnswer[]; rest: Buffer } {
  const answers: RawAnswer[] = []
  let rest = stream
  for (;;) {
    const end = rest.indexOf('\r\n\r\n')
    if (end < 0) break
    const head = rest.subarray(0, end).toString('latin1')
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? NaN)
    if (Number.isNaN(length) || rest.length < end + 4 + length) break
    answers.push({ status: Number(head.slice(9, 12)), body: rest.subarray(end + 4, end + 4 + length).toString('utf8') })
    rest = rest.subarray(end + 4 + length)
  }
  return { answers, rest }
}

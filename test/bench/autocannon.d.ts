// Minimal types for the parts of autocannon the benchmark uses (the package ships none).
declare module 'autocannon' {
  interface Histogram { average: number; p50: number; p99: number; max: number }
  interface Result { requests: Histogram; latency: Histogram; non2xx: number; errors: number; timeouts: number; statusCodeStats?: Record<string, { count: number }> }
  interface Options { url: string; connections?: number; duration?: number; headers?: Record<string, string>; pipelining?: number; method?: string; body?: string }
  function autocannon(opts: Options): Promise<Result>
  export default autocannon
}

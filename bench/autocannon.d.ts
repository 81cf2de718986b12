// autocannon ships no types; this declares only what the benches use (v8 API).
declare module 'autocannon' {
  function autocannon(options: autocannon.Options): autocannon.Instance;
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      method?: 'GET' | 'PUT' | 'POST' | 'PATCH' | 'DELETE';
      headers?: Record<string, string>;
      body?: string | Buffer;
    }
    interface Histogram {
      average: number;
      p50: number;
      p99: number;
    }
    interface Result {
      requests: Histogram & { total: number };
      latency: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
    }
    interface Instance extends PromiseLike<Result> {
      stop(): void;
    }
  }
  export = autocannon;
}

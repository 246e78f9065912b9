// Minimal types for the parts of autocannon the load generator uses (the package ships none).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      connections?: number;
      duration?: number;
      overallRate?: number;
      renderProgressBar?: boolean;
      renderResultsTable?: boolean;
      renderLatencyTable?: boolean;
    }
    interface Result {
      requests: { average: number; total: number };
      latency: Record<string, number>;
      non2xx: number;
      errors: number;
      timeouts: number;
    }
  }
  function autocannon(opts: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}

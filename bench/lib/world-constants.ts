export const BENCH_PASSWORD = 'bench password 123'

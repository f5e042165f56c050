// What every client's run shares: its environment and its summary line.
// Environment: REFTRACK_BASE_URL, REFTRACK_API_KEY, AFFILIATE_URL.

export function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

export const baseUrl = env("REFTRACK_BASE_URL");
export const apiKey = env("REFTRACK_API_KEY");
export const affiliateUrl = env("AFFILIATE_URL");
// A customer and an invoice of this run's own, so that several clients can run against one program.
export const customer = `${process.argv[2] ?? "client"}_${Date.now()}`;
export const invoice = `${customer}_inv`;

export interface Summary {
  click_id: string;
  customer_key: string;
  lead_id: number | null;
  sale_id: number;
  transaction_id: string;
  readiness_program_id: number;
}

export function report(s: Summary): void {
  console.log(JSON.stringify(s));
}

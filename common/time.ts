/** The injectable clock (Kafka's Time): Date.now() in production, a settable clock in tests (common/testing/mock-time.ts). */
export interface Time {
  milliseconds(): number;
}

export const SystemTime: Time = { milliseconds: () => Date.now() };

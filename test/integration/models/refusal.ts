// The ApiError a provider call rejected with (fails the test when it resolved or threw something else).
import { ApiError } from '../../../src/core/host/api-error.js';

export async function refusal(p: Promise<unknown>): Promise<ApiError> {
  const err: unknown = await p.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof ApiError)) throw new Error(`expected an ApiError, got ${String(err)}`);
  return err;
}

// The error a call throws, of the class the test expects: another error, or no throw at all, fails the test.
export function thrown<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected ${type.name} to be thrown`);
}

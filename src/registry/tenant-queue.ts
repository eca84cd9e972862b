/**
 * Runs each tenant's tasks one after the other, in the order given (different tenants' at once):
 * a tenant's registration whose schemas compile slowly is never overtaken by a later one.
 */
export function createTenantQueue(): <T>(tenant: string, task: () => Promise<T>) => Promise<T> {
  // The end of each tenant's last task (settled either way); gone once the tenant has none left.
  const tails = new Map<string, Promise<void>>();
  return (tenant, task) => {
    const run = (tails.get(tenant) ?? Promise.resolve()).then(task);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    tails.set(tenant, tail);
    void tail.then(() => {
      if (tails.get(tenant) === tail) tails.delete(tenant);
    });
    return run;
  };
}

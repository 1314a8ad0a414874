/**
 * Keeping a broker's ports across a restart: `listeners` with each port 0 replaced by the port
 * that listener was bound to before, so a restarted node (startBroker's control.start(),
 * startCluster's startBroker) is found where clients last saw it.
 */
export function pinPorts(listeners: string, bound: ReadonlyMap<string, number> | undefined): string {
  if (!bound) return listeners;
  return listeners
    .split(',')
    .map((entry) => {
      const m = /^\s*([^:]+):\/\/(.*):0\s*$/.exec(entry);
      const port = m ? bound.get(m[1].toUpperCase()) : undefined;
      return m && port !== undefined ? `${m[1]}://${m[2]}:${port}` : entry;
    })
    .join(',');
}

/**
 * The Node.js versions this service supports (package.json `engines`, README "Requirements"). Older ones are
 * refused at start with one message instead of failing later in some dependency; newer ones are let run.
 */
export const SUPPORTED_NODE_MAJORS = [22, 24];
export const RECOMMENDED_NODE_MAJOR = 24;

/** Why `version` (as in `process.versions.node`, e.g. "20.20.2") cannot run the service, or undefined if it can. */
export function unsupportedNodeMessage(version: string): string | undefined {
  const major = Number(version.split('.')[0]);
  if (major >= Math.min(...SUPPORTED_NODE_MAJORS)) return undefined;
  return `Node.js ${version} is not supported: use Node.js ${SUPPORTED_NODE_MAJORS.join(' or ')} (${RECOMMENDED_NODE_MAJOR} recommended)`;
}

/** Called first by every entry point: prints the message and exits when this Node.js is not supported. */
export function exitOnUnsupportedNode(): void {
  const message = unsupportedNodeMessage(process.versions.node);
  if (!message) return;
  console.error(message);
  process.exit(1);
}

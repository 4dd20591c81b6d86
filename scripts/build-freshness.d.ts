/** A digest of every file a build reads (scripts/build-freshness.js). */
export function sourcesDigest(root: string): string;
/** Whether the build in `root` was made from its sources as they are now. */
export function isFresh(root: string): boolean;
/** Records that the build in `root` was made from sources of this digest (default: as they are now). */
export function markFresh(root: string, digest?: string): void;

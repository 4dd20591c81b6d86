/** cluster-key-slot (ioredis's own slot function) ships no types. */
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0–16383) of a key, by its `{hash tag}` if it has one. */
  export default function calculateSlot(key: string | Buffer): number;
}

/** Reading a server-sent event stream (the dashboard's /events) over plain fetch. */

export interface EventStream {
  status: number;
  contentType: string | null;
  /** Reads on until what came so far matches `pattern`; returns all that came. */
  until(pattern: RegExp): Promise<string>;
  close(): Promise<void>;
}

export async function openEventStream(url: string, init: RequestInit = {}): Promise<EventStream> {
  const response = await fetch(url, init);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    async until(pattern) {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended before ${pattern}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
      return text;
    },
    close: () => reader.cancel(),
  };
}

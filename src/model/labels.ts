/** A run's labels, as its fields hold them (`labels`: JSON text, set by staging and `fitq update`). */
export function labelsOf(fields: Readonly<Record<string, string>>): Record<string, string> {
  try {
    const labels = JSON.parse(fields.labels ?? '{}') as unknown;
    return typeof labels === 'object' && labels !== null && !Array.isArray(labels) ? { ...(labels as Record<string, string>) } : {};
  } catch {
    return {};
  }
}

/**
 * GPU device lists like `0,1,3`: a worker's devices (`fitq worker --gpus`)
 * and the devices a run is pinned to (`fitq stage --gpus`).
 */
import { UsageError } from '../errors.js';
import { quote } from '../text/quote.js';

/** Device indices above this are surely typos. */
export const MAX_DEVICE_INDEX = 1023;

/** Parses "0,1,3" into sorted distinct indices; `flag` names the option in errors. */
export function parseDeviceList(text: string, flag: string, expected = 'device indices like 0,1,3'): number[] {
  const parts = text.split(',').map((part) => part.trim());
  const devices = parts.map((part) => {
    if (!/^\d{1,4}$/.test(part) || Number(part) > MAX_DEVICE_INDEX) {
      throw new UsageError(`invalid ${flag} ${quote(text)}: expected ${expected} (0 to ${MAX_DEVICE_INDEX})`);
    }
    return Number(part);
  });
  if (new Set(devices).size !== devices.length) throw new UsageError(`invalid ${flag} ${quote(text)}: a device is listed twice`);
  return devices.sort((a, b) => a - b);
}

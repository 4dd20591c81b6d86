/**
 * The overview's activity chart labels its minutes in the local time zone
 * (TZ) of the dashboard, as its run tables show times (units/time.ts): the
 * chart is rendered by a real process with TZ set.
 */
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

const render = `
const { activityChart } = await import(new URL('dist/dashboard/chart.js', 'file://' + process.cwd() + '/').href);
const { activityOf } = await import(new URL('dist/dashboard/activity.js', 'file://' + process.cwd() + '/').href);
process.stdout.write(String(await activityChart(activityOf([], Date.UTC(2030, 0, 15, 13, 0, 0)), 'activity')));
`;

describe('the activity chart', () => {
  it.each([
    ['America/New_York', ['07:01', '07:31', '08:00']],
    ['Asia/Tokyo', ['21:01', '21:31', '22:00']],
  ])('TZ=%s: its minutes are labelled in local time', async (zone, labels) => {
    const { stdout } = await execa('node', ['--input-type=module', '-e', render], { env: { TZ: zone } });
    const axis = /<div class="chart-x"[^>]*>(.*?)<\/div>/s.exec(stdout)?.[1];
    expect(axis).toBe(labels.map((label) => `<span>${label}</span>`).join(''));
  });
});

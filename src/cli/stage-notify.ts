/** `fitq stage --notify URL`: the run's worker POSTs the run's record there when it ends. */
import { Flags } from '@oclif/core';
import { validateNotifyUrl } from '../model/notify.js';

export const stageNotifyFlags = {
  notify: Flags.string({
    summary: "POST the run's record (JSON) to this http(s) URL when it ends, instead of the namespace's (fitq notify).",
    description: "No user name or password in it. Workers send only where their --notify-allow lets them (a worker with a secret: nowhere without it).",
  }),
};

/** The URL, validated before anything is staged (a UsageError quoting it). */
export function parseStageNotify(flags: { notify?: string | undefined }): { notify?: string } {
  return flags.notify === undefined ? {} : { notify: validateNotifyUrl(flags.notify) };
}

/**
 * A run's project: the value of its `project` label (`--label
 * project=vision`), as gflow's projects and Slurm's accounts. A project can
 * have a quota of its own (`fitq quota set --label project=vision gpu=4`),
 * which every run of the project counts against, whoever staged it,
 * besides its user's; so the project is part of the run's staged-index
 * shape (resources/shape.ts) and its value is a name as a user's is. The one
 * place the label is named, read and checked.
 */
import { UsageError } from '../errors.js';
import { USER_NAME_PATTERN } from '../resources/user-name.js';
import { quote } from '../text/quote.js';

/** The label that names a run's project. */
export const PROJECT_LABEL = 'project';

/** The quota owner of a project as Redis names it (`quota:project=vision`): never a user's name, which holds no `=`. */
export const projectOwner = (project: string): string => `${PROJECT_LABEL}=${project}`;

/** The project a quota owner names (`project=vision`), or undefined for a user's. */
export function projectOfOwner(owner: string): string | undefined {
  return owner.startsWith(`${PROJECT_LABEL}=`) ? owner.slice(PROJECT_LABEL.length + 1) : undefined;
}

/** A project's name, checked; a UsageError quoting it otherwise. */
export function checkProject(value: string): string {
  if (!USER_NAME_PATTERN.test(value)) {
    throw new UsageError(`invalid label ${PROJECT_LABEL}=${quote(value)}: a project is 1 to 64 letters, digits or ._@+- (not starting with . @ + or -), as a user name`);
  }
  return value;
}

/** The project of a run's labels, checked, if it has one. */
export function projectOf(labels: Readonly<Record<string, string>>): string | undefined {
  const value = labels[PROJECT_LABEL];
  return value === undefined ? undefined : checkProject(value);
}

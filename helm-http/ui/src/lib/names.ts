// What a name may be made of, in the words a field says when one breaks
// the rule (the browser's own "Please match the requested format." says
// nothing useful). Each matches the server's check and the field's pattern.

/** Channel names: `#?[a-z0-9][a-z0-9_-]{0,63}`. */
export const CHANNEL_NAME_PATTERN = "#?[a-z0-9][a-z0-9_\\-]{0,63}";
export const CHANNEL_NAME_RULE = "Use lowercase letters, digits, '-' and '_', starting with a letter or digit (up to 64).";

/** People's names: `[a-z][a-z0-9._-]{0,31}`. */
export const USER_NAME_PATTERN = "[a-z][a-z0-9._\\-]{0,31}";
export const USER_NAME_RULE = "Use lowercase letters, digits, '-', '_' and '.', starting with a letter (up to 32).";

/** The workspace's name: 1–64 characters, not only spaces (the server trims it). */
export const WORKSPACE_NAME_PATTERN = ".*\\S.*";
export const WORKSPACE_NAME_RULE = "Use 1 to 64 characters, not only spaces.";

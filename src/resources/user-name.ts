/**
 * A user name (who stages a run, whose quota): 1 to 64 of letters, digits
 * and `._@+-`, starting with a letter, digit or `_`, as POSIX and LDAP
 * names go. It is part of a run's staged-index shape (shape.ts), so the
 * grammar lives down here with the shape's; its Lua twin is in
 * lua/includes/shape/readShape.lua.
 */
export const USER_NAME_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9._@+-]{0,63}$/;

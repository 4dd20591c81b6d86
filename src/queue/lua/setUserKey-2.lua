#!lua
--[[
  `fitq keys add|rm`: registers a user's public key (`ed25519:<base64url>`,
  checked by src/security/user-keys.ts before the call), replacing the one
  they had, or removes it. Workers started with --require-signed read it
  (HGET) for each run they start: a run is theirs only if this key makes
  its `userSignature` good. An admin's signed requests may change any
  user's signed runs (includes/requests/); a user removed is no admin.

  KEYS[1]  user-keys  hash: user -> public key
  KEYS[2]  admins     set: the registered users who are admins

  ARGV[1] user, ARGV[2] "add" or "remove", ARGV[3] the key (add),
  ARGV[4] (add) "admin" makes the user an admin, "user" makes them none,
  "" leaves it as it was (none for a user new here)

  Returns {CODE.ok, replaced, admin}: replaced is 1 when add replaced
  another key, admin 1 when the user is an admin now; {CODE.unchanged} when
  remove finds no key for the user.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing changes, the user is told so.
]]
local userKeysKey = KEYS[1]
local adminsKey = KEYS[2]
local user, action, role = ARGV[1], ARGV[2], ARGV[4]

if action == "add" then
  local before = redis.call("HGET", userKeysKey, user)
  redis.call("HSET", userKeysKey, user, ARGV[3])
  if role == "admin" then
    redis.call("SADD", adminsKey, user)
  elseif role == "user" or not before then
    redis.call("SREM", adminsKey, user)
  end
  return {CODE.ok, (before and before ~= ARGV[3]) and 1 or 0, redis.call("SISMEMBER", adminsKey, user)}
end
redis.call("SREM", adminsKey, user)
if redis.call("HDEL", userKeysKey, user) == 0 then return {CODE.unchanged} end
return {CODE.ok, 0, 0}

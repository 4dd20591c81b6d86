#!lua
--[[
  `fitq keys add|rm`: registers a user's public key (`ed25519:<base64url>`,
  checked by src/security/user-keys.ts before the call), replacing the one
  they had, or removes it. Workers started with --require-signed read it
  (HGET) for each run they start: a run is theirs only if this key makes
  its `userSignature` good.

  KEYS[1]  user-keys  hash: user -> public key

  ARGV[1] user, ARGV[2] "add" or "remove", ARGV[3] the key (add)

  Returns {CODE.ok, replaced}: replaced is 1 when add replaced another key;
  {CODE.unchanged} when remove finds no key for the user.

  Flags: none (`#!lua`): Redis refuses it whole while it is out of memory
  (maxmemory reached): nothing changes, the user is told so.
]]
local userKeysKey = KEYS[1]
local user, action = ARGV[1], ARGV[2]

if action == "add" then
  local before = redis.call("HGET", userKeysKey, user)
  redis.call("HSET", userKeysKey, user, ARGV[3])
  return {CODE.ok, (before and before ~= ARGV[3]) and 1 or 0}
end
if redis.call("HDEL", userKeysKey, user) == 0 then return {CODE.unchanged} end
return {CODE.ok, 0}

-- Publishes a message (JSON) on the namespace's pub/sub channel
-- `<base>events`, a channel, not a key.
local function publish(base, message)
  redis.call("PUBLISH", KEY.events(base), cjson.encode(message))
end

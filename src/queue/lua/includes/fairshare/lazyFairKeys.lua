-- @include fairshare/fairKey
-- @include shape/shapeUser

-- The fair keys (fairKey) of `entries` (shape, score, flat: a group's read),
-- by position, each made the first time it is looked at: a claim looks at
-- the first few of a read only.
local function lazyFairKeys(fair, entries)
  return setmetatable({}, {__index = function(keys, i)
    local _, user = shapeUser(entries[i] or "")
    local key = fairKey(fair, tonumber(entries[i + 1]) or -math.huge, user)
    rawset(keys, i, key)
    return key
  end})
end

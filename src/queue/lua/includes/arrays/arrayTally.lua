-- How the runs of an array stand, for the runs that wait for it (`--after
-- ARRAY`), from the hash `arrays:tally`: `open` (staged, held or running),
-- `ok` (completed), `notok` (ended otherwise, or removed before they
-- ended), `total` (all three) and `last` (the last run that did not
-- complete, "id|status|reason"). A run removed after it ended still counts
-- as it ended. nil for an array fitq does not count (gone, or staged by an
-- older fitq).
local function arrayTally(base, array)
  local t = redis.call("HMGET", KEY.arrayTally(base), array .. ":open", array .. ":ok", array .. ":notok", array .. ":last")
  if not t[1] then return nil end
  local open, ok, notok = tonumber(t[1]) or 0, tonumber(t[2]) or 0, tonumber(t[3]) or 0
  return {open = open, ok = ok, notok = notok, total = open + ok + notok, last = t[4] or ""}
end

-- A command's reply, or nil when Redis refuses it (its key holds another
-- type): for keys named by what a script read (a run id in an index, a
-- shape, a worker named in a job), which a hostile writer may have made
-- anything. Raising there, after a script has written, would leave its
-- writes half done (Lua scripts are not rolled back).
local function tryCall(...)
  local reply = redis.pcall(...)
  if type(reply) == "table" and reply.err then return nil end
  return reply
end

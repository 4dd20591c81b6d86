-- BullMQ ranks prioritized jobs by priority * 2^32 + a counter, lower first;
-- fitq's priority (+-1,000,000, higher first) maps to BullMQ's 1..2,000,001,
-- and its staging sequence is the counter (see orderScore). (A script that
-- reads BullMQ's priority back as fitq's uses PRIORITY_BASE too.)
local PRIORITY_BASE = 1000001
local function bullPriority(priority) return PRIORITY_BASE - tonumber(priority) end

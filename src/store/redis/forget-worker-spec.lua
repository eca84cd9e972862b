-- Forgets a worker tool's shared spec (RemoveTool): deletes its field of the specs hash and, when
-- there was one, announces the removal on the specs channel, in one step. Two commands could leave
-- the field deleted and the removal unannounced (the PUBLISH failed): RemoveTool asked again would
-- then find no field and announce nothing, and other replicas would keep the tool.
-- KEYS[1]: the specs hash, whose name is also the channel's
-- ARGV[1]: the field (tenant, newline, tool name)
-- ARGV[2]: the announcement
-- Returns 1 when the field was there, else 0.
if redis.call('HDEL', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('PUBLISH', KEYS[1], ARGV[2])
return 1

--- One request at a time: a debounce timer and the request on its way. Starting a newer request cancels
--- the one on its way, and only the newest one's answer is handed on.
local M = {}

local REQUEST_CANCELLED = -32800

---@class dcomplete.Pending
---@field timer? uv.uv_timer_t
---@field request? {client_id: integer, id: integer}
local Pending = {}
Pending.__index = Pending

---@return dcomplete.Pending
function M.new()
  return setmetatable({}, Pending)
end

--- Cancels the request on its way, if any.
function Pending:cancel()
  local request = self.request
  self.request = nil
  local client = request and vim.lsp.get_client_by_id(request.client_id)
  if client then
    client:cancel_request(request.id)
  end
end

--- Cancels the request on its way and the one waiting for its timer.
function Pending:stop()
  self:cancel()
  if self.timer then
    self.timer:stop()
  end
end

--- Runs `fn` (on the main loop) after `ms` without another call.
---@param ms integer
---@param fn fun()
function Pending:after(ms, fn)
  self.timer = self.timer or vim.uv.new_timer()
  self.timer:stop()
  self.timer:start(ms, 0, vim.schedule_wrap(fn))
end

--- Sends `method`, cancelling the request on its way. `on_result(result)` runs when this one is answered
--- and still the newest; an error other than a cancellation is reported once, naming `what`.
---@param client vim.lsp.Client
---@param what string e.g. "inline completion"
---@return boolean sent
function Pending:send(client, method, params, bufnr, what, on_result)
  self:cancel()
  local id
  local ok, request_id = client:request(method, params, function(err, result)
    if not self.request or self.request.id ~= id then
      return
    end
    self.request = nil
    if err then
      if err.code ~= REQUEST_CANCELLED then
        vim.notify_once(('dcomplete: %s failed: %s'):format(what, err.message or vim.inspect(err)), vim.log.levels.WARN)
      end
      return
    end
    on_result(result)
  end, bufnr)
  if ok then
    id = request_id
    self.request = { client_id = client.id, id = request_id }
  end
  return ok == true
end

--- Stops everything and frees the timer.
function Pending:close()
  self:stop()
  if self.timer then
    self.timer:close()
    self.timer = nil
  end
end

return M

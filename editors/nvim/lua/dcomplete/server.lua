--- Starting the dcomplete language server and talking to it.
local M = {}

M.NAME = 'dcomplete'

--- What the `dcomplete/status` notifications said: {model, device, lastLatencyMs, error, engine}.
---@type {model?: string, device?: string, lastLatencyMs?: number, error?: string, engine?: string}|nil
M.status = nil

--- Merges one notification: fields persist, except `error`, which the server sends only in the
--- notification that reports a failure (the next one without it means the failure is over).
function M.update_status(params)
  params = type(params) == 'table' and params or {}
  local status = vim.tbl_extend('force', M.status or {}, params)
  status.error = params.error
  M.status = status
end

---@param bufnr integer
---@return vim.lsp.Client|nil
function M.client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr, name = M.NAME })[1]
end

local function root_dir(bufnr, markers)
  local found = vim.fs.root(bufnr, markers)
  if found then
    return found
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= '' and vim.fs.dirname(name) or vim.fn.getcwd()
end

--- Restarts after a crash: at most RESTART_LIMIT within RESTART_WINDOW_S, then the user is told to act.
M.RESTART_LIMIT = 5
M.RESTART_WINDOW_S = 180
local restarts = {}

--- Whether an exit is a crash to recover from: not a clean exit, not SIGTERM (a stop someone asked
--- for, such as `client:stop(true)`), and not Neovim quitting.
local function crashed(code, signal)
  return (code ~= 0 or signal ~= 0) and signal ~= 15 and vim.v.exiting == vim.NIL
end

local function allow_restart()
  local now = vim.uv.now() / 1000
  restarts = vim.tbl_filter(function(t)
    return now - t < M.RESTART_WINDOW_S
  end, restarts)
  if #restarts >= M.RESTART_LIMIT then
    return false
  end
  restarts[#restarts + 1] = now
  return true
end

--- Starts a fresh server for every loaded buffer of the configured filetypes (the crashed client is gone).
local function restart(config, code, signal)
  if not allow_restart() then
    vim.notify(
      ('dcomplete: the server exited (code %d, signal %d) %d times in %d s; not restarting it again (:e reattaches)')
        :format(code, signal, M.RESTART_LIMIT, M.RESTART_WINDOW_S),
      vim.log.levels.ERROR
    )
    return
  end
  vim.notify(('dcomplete: the server exited (code %d, signal %d); restarting it'):format(code, signal), vim.log.levels.WARN)
  M.start_all(config)
end

--- Starts (or reuses) the server for every loaded buffer of the configured filetypes.
---@param config dcomplete.Config
function M.start_all(config)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.tbl_contains(config.filetypes, vim.bo[bufnr].filetype) then
      M.start(bufnr, config)
    end
  end
end

--- Starts (or reuses) the server for `bufnr`; returns the client id or nil.
---@param bufnr integer
---@param config dcomplete.Config
---@return integer|nil
function M.start(bufnr, config)
  if vim.fn.executable(config.cmd[1]) ~= 1 then
    vim.notify_once(
      ('dcomplete: server command `%s` is not executable (set `cmd` in setup())'):format(config.cmd[1]),
      vim.log.levels.ERROR
    )
    return nil
  end
  return vim.lsp.start({
    name = M.NAME,
    cmd = config.cmd,
    root_dir = root_dir(bufnr, config.root_markers),
    init_options = { dcomplete = config.settings },
    settings = { dcomplete = config.settings },
    on_exit = function(code, signal)
      if crashed(code, signal) then
        -- after the exit callbacks: the dead client must be gone before a new one can start
        vim.defer_fn(function()
          restart(config, code, signal)
        end, 200)
      end
    end,
    handlers = {
      ['dcomplete/status'] = function(_, params)
        M.update_status(params)
      end,
    },
  }, { bufnr = bufnr })
end

--- Sends new settings to every running dcomplete client.
---@param settings table
function M.push_settings(settings)
  for _, client in ipairs(vim.lsp.get_clients({ name = M.NAME })) do
    client.settings = { dcomplete = settings }
    client:notify('workspace/didChangeConfiguration', { settings = { dcomplete = settings } })
  end
end

--- Runs a server command (workspace/executeCommand) for `bufnr`. Edits come back as
--- workspace/applyEdit, which Neovim applies itself; `on_done(err, result)` runs when the server answers.
---@param bufnr integer
---@param command string
---@param args table
---@param on_done? fun(err: table|nil, result: any)
---@return boolean sent
function M.execute(bufnr, command, args, on_done)
  local client = M.client(bufnr)
  if not client then
    vim.notify('dcomplete: no dcomplete server is attached to this buffer', vim.log.levels.ERROR)
    return false
  end
  client:exec_cmd({ title = command, command = command, arguments = { args } }, { bufnr = bufnr }, function(err, result)
    if err then
      vim.notify(('dcomplete: %s failed: %s'):format(command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
    end
    if on_done then
      on_done(err, result)
    end
  end)
  return true
end

--- Tells the server that a suggestion was accepted, by running the item's own command.
---@param client_id integer
---@param bufnr integer
---@param command lsp.Command|nil
function M.run_item_command(client_id, bufnr, command)
  local client = vim.lsp.get_client_by_id(client_id)
  if client and command then
    client:exec_cmd(command, { bufnr = bufnr })
  end
end

return M

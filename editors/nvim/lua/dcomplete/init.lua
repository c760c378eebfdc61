--- dcomplete: inline completion and infill from the dcomplete language server.
---
--- require('dcomplete').setup({ cmd = {...}, filetypes = {...}, renderer = 'auto', settings = {...}, keymaps = {...},
---   next_edit = {...} })
local config_mod = require('dcomplete.config')
local next_edit = require('dcomplete.next_edit')
local server = require('dcomplete.server')

local M = {}

---@type dcomplete.Config|nil
local config
---@type table<integer, "builtin"|"extmark">
local renderer_of = {}

local function renderer(bufnr)
  local name = renderer_of[bufnr]
  return name and require('dcomplete.render.' .. name), name
end

local function current_buf()
  return vim.api.nvim_get_current_buf()
end

--- Accepts the whole suggestion shown in the current buffer. Returns false when none is shown.
function M.accept()
  local r = renderer(current_buf())
  return r ~= nil and r.accept(current_buf(), 'all') or false
end

function M.accept_word()
  local r = renderer(current_buf())
  return r ~= nil and r.accept(current_buf(), 'word') or false
end

function M.accept_line()
  local r = renderer(current_buf())
  return r ~= nil and r.accept(current_buf(), 'line') or false
end

function M.dismiss()
  local r = renderer(current_buf())
  if r then
    r.dismiss(current_buf())
  end
end

function M.next()
  local r = renderer(current_buf())
  if r then
    r.cycle(current_buf(), 1)
  end
end

function M.prev()
  local r = renderer(current_buf())
  if r then
    r.cycle(current_buf(), -1)
  end
end

--- Whether a suggestion is shown in `bufnr` (default: current buffer).
function M.visible(bufnr)
  bufnr = bufnr or current_buf()
  local r = renderer(bufnr)
  return r ~= nil and r.visible(bufnr)
end

--- Next edit (normal mode): moves the cursor to the shown edit; with the cursor there, applies it and asks
--- for the next. Returns false when none is shown.
function M.next_edit_jump_or_apply()
  return next_edit.jump_or_apply(current_buf())
end

--- Hides the shown next edit; false when none is shown.
function M.next_edit_dismiss()
  return next_edit.dismiss(current_buf())
end

--- Asks the server for a next edit at the cursor now, without waiting for an edit.
function M.next_edit_request()
  return next_edit.request(current_buf())
end

--- Whether a next edit is shown in `bufnr` (default: current buffer).
function M.next_edit_visible(bufnr)
  return next_edit.shown(bufnr or current_buf()) ~= nil
end

--- Name of the renderer serving `bufnr`, or nil when dcomplete is not attached there.
function M.renderer_name(bufnr)
  return renderer_of[bufnr or current_buf()]
end

--- Short text for a statusline: model, device and last latency, or '' before the server reports; says
--- so instead while the remote engine is unreachable or the model fails.
function M.statusline()
  local status = server.status
  if not status then
    return ''
  end
  if status.engine == 'unreachable' then
    return 'dcomplete: engine unreachable'
  end
  if status.error then
    return 'dcomplete: model failed'
  end
  local parts = {}
  if status.model then
    parts[#parts + 1] = vim.fs.basename((status.model:gsub('[/\\]+$', '')))
  end
  parts[#parts + 1] = status.device
  if status.lastLatencyMs then
    parts[#parts + 1] = ('%d ms'):format(math.floor(status.lastLatencyMs + 0.5))
  end
  return table.concat(parts, ' · ')
end

---@return dcomplete.Config|nil
function M.config()
  return config
end

--- Replaces server settings at run time (sent as workspace/didChangeConfiguration).
function M.update_settings(settings)
  assert(config, 'dcomplete: call setup() first')
  config.settings = vim.tbl_deep_extend('force', config.settings, settings)
  server.push_settings(config.settings)
end

local ACTIONS = {
  accept = M.accept,
  accept_word = M.accept_word,
  accept_line = M.accept_line,
  dismiss = M.dismiss,
  next = M.next,
  prev = M.prev,
}

--- Insert-mode maps act when a suggestion is shown and otherwise pass their key through,
--- so <Tab> still indents. Actions run scheduled: an expr map may not change the buffer.
local function set_keymaps(bufnr)
  for name, lhs in pairs(config.keymaps) do
    if lhs then
      local action = ACTIONS[name]
      local always = name == 'next' or name == 'prev'
      vim.keymap.set('i', lhs, function()
        if always or M.visible(bufnr) then
          vim.schedule(action)
          return ''
        end
        return vim.keycode(lhs)
      end, { buffer = bufnr, expr = true, replace_keycodes = false, desc = 'dcomplete: ' .. name })
    end
  end
end

local function on_attach(bufnr)
  if renderer_of[bufnr] then
    return
  end
  local name = config_mod.pick_renderer(config)
  renderer_of[bufnr] = name
  require('dcomplete.render.' .. name).attach(bufnr, config)
  set_keymaps(bufnr)
  if config.next_edit.enabled then
    next_edit.attach(bufnr, config)
  end
end

---@param opts table|nil
function M.setup(opts)
  config = config_mod.resolve(opts)
  config_mod.pick_renderer(config)
  local group = vim.api.nvim_create_augroup('dcomplete', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = config.filetypes,
    callback = function(event)
      server.start(event.buf, config)
    end,
  })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(event)
      local client = vim.lsp.get_client_by_id(event.data.client_id)
      if client and client.name == server.NAME then
        on_attach(event.buf)
      end
    end,
  })
  vim.api.nvim_create_autocmd('LspDetach', {
    group = group,
    callback = function(event)
      local client = vim.lsp.get_client_by_id(event.data.client_id)
      if client and client.name == server.NAME and renderer_of[event.buf] then
        require('dcomplete.render.' .. renderer_of[event.buf]).detach(event.buf)
        next_edit.detach(event.buf)
        renderer_of[event.buf] = nil
      end
    end,
  })
  server.start_all(config)
end

local function whole_lines_range(bufnr, line1, line2)
  local client = server.client(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, line2 - 1, line2, true)[1]
  local encoding = client and client.offset_encoding or 'utf-16'
  local text = require('dcomplete.text')
  if last == '' and line2 > line1 then
    -- The server reads an end at column 0 as "stop on the line above"; point past the empty line instead.
    return { start = { line = line1 - 1, character = 0 }, ['end'] = { line = line2, character = 0 } }
  end
  return {
    start = { line = line1 - 1, character = 0 },
    ['end'] = { line = line2 - 1, character = text.lsp_character(last, #last, encoding) },
  }
end

--- Regenerates lines line1..line2 (1-based, inclusive) of the current buffer.
---@param on_done? fun(err: table|nil, result: any)
function M.infill(line1, line2, on_done)
  local bufnr = current_buf()
  local args = { uri = vim.uri_from_bufnr(bufnr), range = whole_lines_range(bufnr, line1, line2) }
  return server.execute(bufnr, 'dcomplete.regenerateSelection', args, on_done)
end

--- Fills every `# <|hole|>` line of the current buffer.
function M.fill_holes(on_done)
  local bufnr = current_buf()
  return server.execute(bufnr, 'dcomplete.fillHoles', { uri = vim.uri_from_bufnr(bufnr) }, on_done)
end

--- Rewrites lines line1..line2 following `instruction`.
function M.refactor(line1, line2, instruction, on_done)
  local bufnr = current_buf()
  local args = {
    uri = vim.uri_from_bufnr(bufnr),
    range = whole_lines_range(bufnr, line1, line2),
    instruction = instruction,
  }
  return server.execute(bufnr, 'dcomplete.refactorSelection', args, on_done)
end

return M

--- Renderer on Neovim's own inline completion client (vim.lsp.inline_completion, 0.12+).
--- Neovim requests, draws and accepts; this module adds word/line accept, dismiss and cycling keys.
local text = require('dcomplete.text')

local M = {}

local function inline()
  return vim.lsp.inline_completion
end

function M.attach(bufnr)
  inline().enable(true, { bufnr = bufnr })
end

function M.detach(bufnr)
  inline().enable(false, { bufnr = bufnr })
end

local function namespace()
  return vim.api.nvim_get_namespaces()['nvim.lsp.inline_completion']
end

function M.visible(bufnr)
  local ns = namespace()
  return ns ~= nil and #vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { limit = 1 }) > 0
end

--- Text of `item` not yet in the buffer: its insert text minus what was typed since the range start.
---@param item vim.lsp.inline_completion.Item
local function remaining_text(bufnr, item)
  local insert_text = type(item.insert_text) == 'string' and item.insert_text or item.insert_text.value
  local cursor = vim.api.nvim_win_get_cursor(0)
  if not item.range or item.range.start.row ~= cursor[1] - 1 then
    return insert_text
  end
  local line = vim.api.nvim_buf_get_lines(bufnr, cursor[1] - 1, cursor[1], true)[1]
  local typed = line:sub(item.range.start.col + 1, cursor[2])
  if insert_text:sub(1, #typed) == typed then
    return insert_text:sub(#typed + 1)
  end
  return insert_text
end

local function accept_piece(bufnr, item, pick)
  local piece = pick(remaining_text(bufnr, item))
  if piece == '' then
    return
  end
  local cursor = vim.api.nvim_win_get_cursor(0)
  local row, col = text.insert(bufnr, cursor[1] - 1, cursor[2], piece)
  vim.api.nvim_win_set_cursor(0, { row, col })
end

---@param kind "all"|"word"|"line"
function M.accept(bufnr, kind)
  if kind == 'all' then
    return inline().get({ bufnr = bufnr })
  end
  local pick = kind == 'word' and text.next_word or text.next_line
  return inline().get({
    bufnr = bufnr,
    on_accept = function(item)
      accept_piece(bufnr, item, pick)
    end,
  })
end

--- Neovim has no public dismiss; its InsertLeave handler is what cancels and hides, so run just that.
function M.dismiss(bufnr)
  pcall(vim.api.nvim_exec_autocmds, 'InsertLeave', {
    group = ('nvim.lsp.inline_completion:%d'):format(bufnr),
    modeline = false,
  })
end

--- Cycles among the items Neovim received (automatic requests usually bring one).
function M.cycle(bufnr, step)
  inline().select({ bufnr = bufnr, count = step })
end

return M

--- Drawing a next edit with extmarks: the replaced text highlighted as a deletion, the new text as inline
--- virtual text (one line) or as virtual lines under the place (several lines), and a hint at the end of
--- the cursor's line when the edit is elsewhere.
local M = {}

M.ns = vim.api.nvim_create_namespace('dcomplete.next_edit')

vim.api.nvim_set_hl(0, 'DcompleteNextEditDelete', { link = 'DiffDelete', default = true })
vim.api.nvim_set_hl(0, 'DcompleteNextEditAdd', { link = 'DiffAdd', default = true })
vim.api.nvim_set_hl(0, 'DcompleteNextEditHint', { link = 'DiagnosticHint', default = true })

---@class dcomplete.NextEditPlace
---@field start_row integer 0-based
---@field start_col integer byte column
---@field end_row integer
---@field end_col integer
---@field lines string[] the new text, split at line breaks

--- Whether the edit replaces part of one line with one line of text (drawn inline).
---@param place dcomplete.NextEditPlace
function M.is_inline(place)
  return #place.lines == 1 and place.start_row == place.end_row
end

--- The lines the edited rows become, and where they go: below `row`, or above it when `above`.
--- An edit of whole lines (from column 0 to column 0, text ending in a line break) previews just its lines;
--- any other keeps the text before its start and after its end on the first and last preview line.
---@param bufnr integer
---@param place dcomplete.NextEditPlace
---@return string[] lines, integer row, boolean above
function M.preview(bufnr, place)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local lines = place.lines
  if place.start_col == 0 and place.end_col == 0 and #lines > 1 and lines[#lines] == '' then
    local new = vim.list_slice(lines, 1, #lines - 1)
    if place.end_row > place.start_row then
      return new, math.min(place.end_row, count) - 1, false
    end
    if place.start_row >= count then
      return new, count - 1, false
    end
    return new, place.start_row, true
  end
  local first = vim.api.nvim_buf_get_lines(bufnr, place.start_row, place.start_row + 1, false)[1] or ''
  local last = vim.api.nvim_buf_get_lines(bufnr, place.end_row, place.end_row + 1, false)[1] or ''
  local new = vim.deepcopy(lines)
  new[1] = first:sub(1, place.start_col) .. new[1]
  new[#new] = new[#new] .. last:sub(place.end_col + 1)
  return new, math.min(place.end_row, count - 1), false
end

--- The hint drawn on the cursor's line: where the edit is and the key that goes there.
---@param place dcomplete.NextEditPlace
---@param cursor_row integer 0-based
---@param key string|false the jump key as mapped ("<Tab>"), or false when unmapped
function M.hint(place, cursor_row, key)
  local arrow = place.start_row < cursor_row and '↑' or '↓'
  local where = ('%s next edit: line %d'):format(arrow, place.start_row + 1)
  if not key then
    return where
  end
  return ('%s (%s to jump)'):format(where, (key:gsub('^<(.*)>$', '%1')))
end

function M.clear(bufnr)
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

---@param bufnr integer
---@param place dcomplete.NextEditPlace
---@param cursor_row integer 0-based row of the cursor (the hint goes there when the edit is elsewhere)
---@param key string|false
function M.draw(bufnr, place, cursor_row, key)
  M.clear(bufnr)
  local set = function(row, col, opts)
    opts.strict = false
    vim.api.nvim_buf_set_extmark(bufnr, M.ns, row, col, opts)
  end
  local empty = place.start_row == place.end_row and place.start_col == place.end_col
  if not empty then
    set(place.start_row, place.start_col, {
      end_row = place.end_row,
      end_col = place.end_col,
      hl_group = 'DcompleteNextEditDelete',
      priority = 200,
    })
  end
  if M.is_inline(place) then
    if place.lines[1] ~= '' then
      set(place.start_row, place.end_col, {
        virt_text = { { place.lines[1], 'DcompleteNextEditAdd' } },
        virt_text_pos = 'inline',
      })
    end
  elseif not (#place.lines == 1 and place.lines[1] == '') then
    local lines, row, above = M.preview(bufnr, place)
    local virt_lines = {}
    for i, line in ipairs(lines) do
      virt_lines[i] = { { line, 'DcompleteNextEditAdd' } }
    end
    set(row, 0, { virt_lines = virt_lines, virt_lines_above = above })
  end
  if cursor_row ~= place.start_row then
    set(cursor_row, 0, {
      virt_text = { { ' ' .. M.hint(place, cursor_row, key), 'DcompleteNextEditHint' } },
      virt_text_pos = 'eol',
    })
  end
end

return M

"""The next-edit example both end-to-end tests use (the language server's over LSP, the VS Code extension's
in code-server): replace `OLD` with `NEW` in the first `return` of `TEXT`, and the bundled model's next edit
does the same on another line that still has `OLD`."""

TEXT = '''from app.http import JsonResponse


class UserView(View):
    def get(self, request, user_id):
        user = self.store.find(user_id)
        if user is None:
            return JsonResponse({"error": "not found"}, status=404)
        return JsonResponse(user.to_dict())

    def delete(self, request, user_id):
        self.store.remove(user_id)
        return JsonResponse({"deleted": user_id})
'''
OLD, NEW = "JsonResponse", "self.render"
EDIT_LINE = 7  # 0-based: the line the user edits
EDITED = TEXT.replace(OLD + '({"error"', NEW + '({"error"', 1)
"""`TEXT` after the user's edit."""
